/**
 * @since 0.1.0
 */
export * as Crm from "./Crm.js"
export * as CrmMigrations from "./CrmMigrations.js"
export * as CrmOperations from "./CrmOperations.js"
export * as FreeMail from "./FreeMail.js"
