/**
 * @since 0.1.0
 */
export * as ArrivalOperations from "./ArrivalOperations.js"
export * as Arrivals from "./Arrivals.js"
export * as CloudEvent from "./CloudEvent.js"
export * as DoorApiRefusal from "./DoorApiRefusal.js"
export * as DoorBundle from "./DoorBundle.js"
export * as DoorLimiter from "./DoorLimiter.js"
export * as DoorMigrations from "./DoorMigrations.js"
export * as DoorRefusal from "./DoorRefusal.js"
export * as Intake from "./Intake.js"
export * as Mappings from "./Mappings.js"
export * as NoticeBody from "./NoticeBody.js"
export * as SandboxOperations from "./SandboxOperations.js"
export * as SourceOperations from "./SourceOperations.js"
export * as Sources from "./Sources.js"
export * as StandardWebhooks from "./StandardWebhooks.js"
export * as Templates from "./Templates.js"
