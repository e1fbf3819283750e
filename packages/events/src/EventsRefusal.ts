/**
 * The refusals of the events operations (subscriptions and their delivery log) on every transport: one codec,
 * so HTTP, MCP and the CLI answer a refusal with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const EventsCode = Schema.Literal(
  "invalid_field_value",
  "destination_not_found",
  "address_rejected",
  "test_workspace_not_allowed",
  "events_unavailable"
)
/** @since 0.1.0 @category models */
export type EventsCode = typeof EventsCode.Type

/** What the caller can do next. @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal("fix_arguments", "list_subscriptions", "use_public_https_address", "use_workspace", "retry_later")
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

/**
 * A refusal of an events operation.
 *
 * @since 0.1.0 @category errors
 */
export class EventsRefusal extends Schema.TaggedError<EventsRefusal>("@service/events/EventsRefusal")("EventsRefusal", {
  ...Refusal.standardFields(EventsCode)
}) {}

const rules: { readonly [K in EventsCode]: Refusal.RefusalRule & { readonly action: RecoveryAction } } = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or out of range" },
  destination_not_found: {
    status: 404,
    retryable: false,
    action: "list_subscriptions",
    description: "no subscription or Destination with that id in this workspace"
  },
  address_rejected: {
    status: 422,
    retryable: false,
    action: "use_public_https_address",
    description: "the address is not public https, or resolves to a private, loopback, link-local or reserved address"
  },
  test_workspace_not_allowed: {
    status: 409,
    retryable: false,
    action: "use_workspace",
    description: "test workspaces deliver nothing: create Destinations in the real workspace"
  },
  events_unavailable: { status: 503, retryable: true, action: "retry_later", description: "the event store cannot be reached right now" }
}

/**
 * Builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category constructors
 */
export const refuse = Refusal.standardRefuse((fields: Refusal.Standard<EventsCode>) => new EventsRefusal(fields))

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "events",
  identifier: "Events",
  tag: "EventsRefusal",
  is: (u: unknown): u is EventsRefusal => u instanceof EventsRefusal,
  codes: EventsCode,
  actions: RecoveryAction,
  rules,
  make: (fields) => new EventsRefusal(fields),
  invalidInputCode: "invalid_field_value",
  outage: {
    code: "events_unavailable",
    why: "The event store cannot be reached right now.",
    suggestedCorrection: "Retry in a few seconds; nothing was changed."
  }
})
