/**
 * @since 0.1.0
 */
export * as AddressGuard from "./AddressGuard.js"
export * as Catalog from "./Catalog.js"
export * as EventLedger from "./EventLedger.js"
export * as EventsMigrations from "./EventsMigrations.js"
export * as RetrySchedule from "./RetrySchedule.js"
export * as WebhookPost from "./WebhookPost.js"
export * as WebhookSignature from "./WebhookSignature.js"
