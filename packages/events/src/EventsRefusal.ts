/**
 * The refusals of the events operations (subscriptions and their delivery log) on every transport: one codec,
 * so HTTP, MCP and the CLI answer a refusal with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "events",
  identifier: "Events",
  rules: {
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
    }
  },
  outage: { code: "events_unavailable", store: "the event store" }
})

/**
 * A refusal of an events operation.
 *
 * @since 0.1.0 @category errors
 */
export class EventsRefusal extends Schema.TaggedError<EventsRefusal>("@service/events/EventsRefusal")("EventsRefusal", defined.fields) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(EventsRefusal)
