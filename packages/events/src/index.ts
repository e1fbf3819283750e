/**
 * @since 0.1.0
 */
export * as Catalog from "./Catalog.js"
export * as Delivery from "./Delivery.js"
export * as DeliveryLog from "./DeliveryLog.js"
export * as DeliveryOperations from "./DeliveryOperations.js"
export * as Destinations from "./Destinations.js"
export * as EventLedger from "./EventLedger.js"
export * as EventsBundle from "./EventsBundle.js"
export * as EventsMigrations from "./EventsMigrations.js"
export * as EventsRefusal from "./EventsRefusal.js"
export * as RetrySchedule from "./RetrySchedule.js"
export * as WebhookPost from "./WebhookPost.js"
export * as WebhookSignature from "./WebhookSignature.js"
