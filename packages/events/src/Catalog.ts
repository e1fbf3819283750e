/**
 * The catalog of twenty-two events: what the ledger records, what the door accepts as a CloudEvent `type`, and
 * what an MCP client or a Destination can subscribe to. Each event has a name, a description, its delivery
 * modes, the schema of its subscription arguments and the schema of its payload. No payload carries an email
 * address or a phone number: those identify a person at intake and stay in the CRM
 * (docs/decisions/0050-event-catalog.md).
 *
 * @since 0.1.0
 */
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"

/** An opaque id of a record of the service, e.g. `contact_...`. */
const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

const Subject = Schema.String.pipe(Schema.pattern(/^[a-z_]+\/[A-Za-z0-9_-]{1,100}$/)).annotations({
  description: "Narrows the subscription to one record, e.g. opportunity/<id>."
})

/** The arguments of a subscription: an optional subject. @since 0.1.0 @category schemas */
export const Arguments = Schema.Struct({ subject: Schema.optional(Subject) }).annotations({
  parseOptions: { onExcessProperty: "error" },
  identifier: "EventArguments"
})
/** @since 0.1.0 @category schemas */
export type ArgumentsType = typeof Arguments.Type

const Common = {
  workspace_id: Id,
  occurred_at: Schema.String.annotations({ description: "ISO 8601 UTC." })
}

const ContactPayload = Schema.Struct({
  ...Common,
  contact_id: Id,
  name: Schema.NullOr(Schema.String),
  company_id: Schema.NullOr(Id),
  arrival_id: Schema.NullOr(Id).annotations({ description: "The Arrival that caused it, when it came through the door." }),
  changed_fields: Schema.Array(Schema.String).annotations({ description: "Names of the fields that changed; identifying values never travel in events." })
})

const ErasedPayload = Schema.Struct({
  ...ContactPayload.fields,
  redacted: Schema.optional(Schema.Array(Schema.Struct({ store: Schema.String, redacted: Schema.Number }))).annotations({
    description: "What the erasure redacted, store by store (`door.arrivals`, `events.ledger`...): counts of rows, never values."
  })
})

const CompanyPayload = Schema.Struct({ ...Common, company_id: Id, name: Schema.NullOr(Schema.String), domain: Schema.NullOr(Schema.String) })

const OpportunityPayload = Schema.Struct({
  ...Common,
  opportunity_id: Id,
  contact_id: Schema.NullOr(Id),
  pipeline_id: Id,
  stage_id: Id,
  previous_stage_id: Schema.NullOr(Id)
})

const PipelinePayload = Schema.Struct({
  ...Common,
  pipeline_id: Id,
  name: Schema.String,
  change: Schema.Literal("created", "renamed", "archived", "stage_added", "stage_renamed", "stages_reordered", "stage_archived").annotations({
    description: "What changed."
  }),
  stage_id: Schema.NullOr(Id).annotations({ description: "The stage a stage change names." })
})

const CollectionPayload = Schema.Struct({
  ...Common,
  collection_id: Id,
  name: Schema.String,
  size: Schema.Number.annotations({ description: "How many contacts it holds after the change." }),
  added: Schema.Number,
  removed: Schema.Number
})

const ArrivalPayload = Schema.Struct({
  ...Common,
  arrival_id: Id,
  source_id: Id,
  status: Schema.String.annotations({ description: "The Arrival's status after this step." }),
  event_type: Schema.NullOr(Schema.String)
})

const TopicPayload = Schema.Struct({ ...Common, topic_id: Id, status: Schema.String, actor: Schema.Literal("human", "agent") })

const UnlockPayload = Schema.Struct({
  ...Common,
  collection_id: Id,
  unlocked: Schema.Number,
  credits: Schema.Number
})

const DestinationPayload = Schema.Struct({
  ...Common,
  destination_id: Id,
  kind: Schema.Literal("subscription", "destination"),
  origin: Schema.String.annotations({ description: "The address's scheme, host and port; never its path or query." }),
  consecutive_failures: Schema.Number,
  failing_since: Schema.NullOr(Schema.String).annotations({ description: "ISO 8601 UTC: the first failure of the run that paused it." }),
  last_error: Schema.NullOr(Schema.String),
  probe_at: Schema.NullOr(Schema.String).annotations({
    description: "ISO 8601 UTC: when one waiting delivery is tried to see whether the receiver is back (paused only)."
  })
})

const SearchMatchedPayload = Schema.Struct({
  ...Common,
  saved_search_id: Id,
  name: Schema.String,
  kind: Schema.Literal("opportunities", "awards", "risks"),
  publication: Id.annotations({ description: "The publication that added the records." }),
  added: Schema.Number.annotations({ description: "How many matching records it added." }),
  record_refs: Schema.Array(Schema.String).annotations({
    description: "record_refs of up to 20 added records, for get_opportunity, get_supplier_history or search."
  }),
  complete: Schema.Boolean.annotations({ description: "False when the search matches more records than are compared (1,000)." })
})

/**
 * One catalog event.
 *
 * @since 0.1.0 @category models
 */
export interface CatalogEvent {
  readonly name: string
  readonly description: string
  readonly delivery: ReadonlyArray<"webhook">
  readonly input: Schema.Schema.AnyNoContext
  readonly payload: Schema.Schema.AnyNoContext
}

const event = (name: string, description: string, payload: Schema.Schema.AnyNoContext): CatalogEvent => ({
  name,
  description,
  delivery: ["webhook"],
  input: Arguments,
  payload
})

/**
 * The twenty-two events, in the order `events/list` gives them: the spec's fourteen, the CRM's Pipeline and
 * collection changes (decision 0069), the two a circuit breaker records (decision 0061) and the saved searches'
 * alert (decision 0062).
 *
 * @since 0.1.0 @category catalog
 */
export const events: ReadonlyArray<CatalogEvent> = [
  event("contact.created", "A contact was created in the CRM (through the door or by a person).", ContactPayload),
  event("contact.updated", "A contact's fields changed.", ContactPayload),
  event("contact.erased", "A person's erasure removed a contact's personal data from every store that held it.", ErasedPayload),
  event("company.created", "A company was created, matched from a contact's email domain or by a person.", CompanyPayload),
  event("company.updated", "A company's fields changed.", CompanyPayload),
  event("opportunity.created", "An opportunity was opened in a pipeline stage.", OpportunityPayload),
  event("opportunity.moved", "An opportunity moved to another stage; subscribe with subject opportunity/<id> for one.", OpportunityPayload),
  event("opportunity.closed", "An opportunity reached a won or lost stage.", OpportunityPayload),
  event("arrival.received", "The door stored a request as received.", ArrivalPayload),
  event("arrival.settled", "An Arrival reached a final or waiting status (accepted, set aside, no_person, unmapped, failed, rejected).", ArrivalPayload),
  event("topic.proposed", "A topic was proposed for review.", TopicPayload),
  event("topic.approved", "An owner or admin approved a topic: it is reviewed knowledge.", TopicPayload),
  event("topic.archived", "A topic was archived.", TopicPayload),
  event("contacts.unlocked", "Contact research over a collection was unlocked and charged.", UnlockPayload),
  event("pipeline.created", "A Pipeline was created with its stages.", PipelinePayload),
  event("pipeline.updated", "A Pipeline changed: renamed, archived, or a stage added, renamed, reordered or archived (change says which).", PipelinePayload),
  event("collection.created", "A collection of contacts was made.", CollectionPayload),
  event("collection.updated", "Contacts were added to or removed from a collection.", CollectionPayload),
  event("collection.deleted", "A collection was deleted (its contacts stay in the CRM).", CollectionPayload),
  event(
    "destination.paused",
    "A subscription or Destination failed for long enough that its circuit opened: its deliveries wait, one is tried every hour, and the first that succeeds resumes it.",
    DestinationPayload
  ),
  event("destination.resumed", "A paused subscription or Destination answered again: its waiting deliveries go out.", DestinationPayload),
  event(
    "search.matched",
    "A new market-data publication added records matching a saved search (opportunities, awards or risk marks); subscribe with subject saved_search/<id> for one.",
    SearchMatchedPayload
  )
]

/**
 * The events only the service records (a circuit opening or closing, a saved search matching): the door refuses
 * them as intake.
 *
 * @since 0.1.0 @category catalog
 */
export const serviceOnly: ReadonlyArray<string> = [
  "pipeline.created",
  "pipeline.updated",
  "collection.created",
  "collection.updated",
  "collection.deleted",
  "destination.paused",
  "destination.resumed",
  "search.matched"
]

/** @since 0.1.0 @category catalog */
export const names: ReadonlyArray<string> = events.map((e) => e.name)

/**
 * Whether `type` names a catalog event (what can be subscribed to).
 *
 * @since 0.1.0 @category catalog
 */
export const isCatalogType = (type: string): boolean => names.includes(type)

/**
 * Whether the door accepts `type` as a CloudEvent `type`: a catalog event that is not {@link serviceOnly}.
 *
 * @since 0.1.0 @category catalog
 */
export const isIntakeType = (type: string): boolean => isCatalogType(type) && !serviceOnly.includes(type)

/**
 * The intake types the door applies to the CRM; other catalog types are stored and set aside.
 *
 * @since 0.1.0 @category catalog
 */
export const appliedTypes: ReadonlyArray<string> = ["contact.created", "contact.updated"]

/**
 * An event as `events/list` shows it: JSON Schemas of its arguments and payload.
 *
 * @since 0.1.0 @category catalog
 */
export const listing = (e: CatalogEvent) => ({
  name: e.name,
  description: e.description,
  delivery: e.delivery,
  inputSchema: JSONSchema.make(e.input),
  payloadSchema: JSONSchema.make(e.payload)
})
