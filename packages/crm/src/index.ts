/**
 * @since 0.1.0
 */
export * as Crm from "./Crm.js"
export * as CollectionOperations from "./CollectionOperations.js"
export * as ContactOperations from "./ContactOperations.js"
export * as CrmFixture from "./CrmFixture.js"
export * as CrmMigrations from "./CrmMigrations.js"
export * as CrmOperations from "./CrmOperations.js"
export * as CrmRefusal from "./CrmRefusal.js"
export * as FreeMail from "./FreeMail.js"
export * as PipelineOperations from "./PipelineOperations.js"
