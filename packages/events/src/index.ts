/**
 * @since 0.1.0
 */
export * as Catalog from "./Catalog.js"
export * as EventLedger from "./EventLedger.js"
export * as EventsMigrations from "./EventsMigrations.js"
