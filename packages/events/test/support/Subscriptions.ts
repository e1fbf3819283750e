/**
 * What the Destinations and Delivery tests share: one database per target with the core and events migrations,
 * the subscription and delivery services over the loopback-allowing guard and the test keys, one shared
 * receiver, people in fresh workspaces, request builders and readers of the rows the services write.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto, generateWebhookSecret } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import { type CredentialKind, Principal } from "@service/core/Principal"
import type { Workspace } from "@service/core/Workspace"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Delivery from "../../src/Delivery.js"
import * as Destinations from "../../src/Destinations.js"
import * as EventLedger from "../../src/EventLedger.js"
import * as EventsMigrations from "../../src/EventsMigrations.js"
import * as Hub from "./Hub.js"

export const env = (target: TestDatabase.TestDatabaseTarget, options?: Delivery.Options) =>
  Layer.mergeAll(Destinations.layer, Delivery.layer(options).pipe(Layer.provide(EventLedger.layer)), EventLedger.layer, Accounts.layerSql, Hub.layer).pipe(
    Layer.provideMerge(AddressGuard.layerAllowingLoopbackForTests()),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, EventsMigrations.migrations])),
    Layer.orDie
  )

const suffix = () => Math.random().toString(36).slice(2, 10)

/**
 * Every test starts with the TestClock at the wall clock (the reference package checks `webhook-timestamp`
 * against it) and with no due work left by an earlier test of the file: the tests share one database, and a
 * drain claims every due row of `events.deliveries`.
 */
export const fresh = Effect.gen(function*() {
  yield* TestClock.setTime(Date.now())
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE events.deliveries SET queue_state = 'dead', queue_lease_until = NULL
    WHERE queue_state IN ('pending', 'running')`.pipe(Effect.orDie)
})

export const workspace = (testOf?: Workspace) =>
  Effect.flatMap(Accounts.Accounts, (accounts) => {
    const slug = WorkspaceSlug.make(`ev-${suffix()}`)
    return accounts.createWorkspace({ slug, name: slug, testOf })
  }).pipe(Effect.orDie)

/** A person of `ws` calling with a credential of `kind` (`bearer`: through their MCP client). */
export const personIn = (ws: Workspace, kind: CredentialKind = "bearer") =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const person = yield* accounts.createPerson({ displayName: "Ana Ruiz" })
    yield* accounts.addMember({ workspaceId: ws.id, personId: person.id, role: "member" }).pipe(Effect.orDie)
    return new Principal({
      workspace: ws,
      person: Option.some(person),
      role: "member",
      scopes: [],
      credential: { id: CredentialId.make(`cred_${suffix()}`), kind }
    })
  })

/** A person in a fresh workspace, subscribing through their MCP client. */
export const subscriber = Effect.flatMap(workspace(), (ws) => personIn(ws))

/** The same person's principal with another credential (another token, or an API key). */
export const withCredential = (principal: Principal, kind: CredentialKind) =>
  new Principal({ ...principal, credential: { id: CredentialId.make(`cred_${suffix()}`), kind } })

export const faceless = (ws: Workspace, kind: CredentialKind = "bearer") =>
  new Principal({ workspace: ws, person: Option.none(), role: "member", scopes: [], credential: { id: CredentialId.make(`cred_${suffix()}`), kind } })

export const newSecret = generateWebhookSecret

export const request = (
  url: string,
  secret: string,
  overrides: Partial<Omit<Destinations.SubscribeRequest, "delivery">> & { readonly mode?: string } = {}
): Destinations.SubscribeRequest => {
  const { mode, ...rest } = overrides
  return { name: "contact.created", arguments: {}, delivery: { mode: mode ?? "webhook", url, secret: Redacted.make(secret) }, ...rest }
}

/** Subscribes (the receiver routed at `path` echoing challenges) and returns the id. */
export const subscribe = (principal: Principal, url: string, secret: string, overrides: Parameters<typeof request>[2] = {}) =>
  Effect.flatMap(Destinations.Destinations, (d) => d.subscribe(principal, request(url, secret, overrides)))

export const contact = (ws: Workspace, contactId: string) => ({
  workspace_id: ws.id,
  occurred_at: "2026-11-25T12:00:00.000Z",
  contact_id: contactId,
  name: "Ana Ruiz",
  company_id: null,
  arrival_id: null,
  changed_fields: ["name"]
})

export const opportunity = (ws: Workspace, opportunityId: string) => ({
  workspace_id: ws.id,
  occurred_at: "2026-11-25T12:00:00.000Z",
  opportunity_id: opportunityId,
  contact_id: null,
  pipeline_id: "pipeline_1",
  stage_id: "stage_2",
  previous_stage_id: "stage_1"
})

/** Records `contact.created` for `contactId` in `ws`. */
export const recordContact = (ws: Workspace, contactId: string) =>
  Effect.flatMap(EventLedger.EventLedger, (ledger) =>
    ledger.record({ workspaceId: ws.id, name: "contact.created", subject: `contact/${contactId}`, payload: contact(ws, contactId) }))

// -----------------------------------------------------------------------------
// Rows
// -----------------------------------------------------------------------------

const millis = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`

const DestinationRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  kind: Schema.String,
  owner_key: Schema.String,
  created_by: Schema.NullOr(Schema.String),
  url: Schema.String,
  events: Schema.Array(Schema.String),
  subject: Schema.NullOr(Schema.String),
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  state: Schema.String,
  state_reason: Schema.NullOr(Schema.String),
  expires_ms: Schema.NullOr(Schema.Number),
  refresh_ms: Schema.NullOr(Schema.Number),
  consecutive_failures: Schema.Number
})

export const destinationRows = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT id, workspace_id, kind, owner_key, created_by, url, events, subject, secret, previous_secret, state,
        state_reason, ${sql.literal(millis("expires_at"))} AS expires_ms, ${sql.literal(millis("refresh_before"))} AS refresh_ms,
        consecutive_failures
      FROM events.destinations WHERE id = ${id}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(DestinationRow))), Effect.orDie)
  })

export const destinationRow = (id: string) =>
  Effect.flatMap(destinationRows(id), (rows) => rows.length === 1 && rows[0] !== undefined ? Effect.succeed(rows[0]) : Effect.dieMessage(`${rows.length} rows for ${id}`))

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  destination_id: Schema.String,
  ledger_id: Schema.String,
  outcome: Schema.String,
  settled: Schema.Boolean,
  queue_state: Schema.String,
  queue_attempts: Schema.Number,
  next_ms: Schema.Number
})
export type DeliveryRow = typeof DeliveryRow.Type

/** The deliveries of a destination (or of a workspace), in ledger order. */
export const deliveryRows = (where: { readonly destination: string } | { readonly workspace: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const filter = "destination" in where ? sql`destination_id = ${where.destination}` : sql`workspace_id = ${where.workspace}`
    return yield* sql`SELECT id, destination_id, ledger_id::text AS ledger_id, outcome, settled_at IS NOT NULL AS settled, queue_state,
        queue_attempts, ${sql.literal(millis("queue_next_attempt_at"))} AS next_ms
      FROM events.deliveries WHERE ${filter} ORDER BY deliveries.ledger_id, deliveries.destination_id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(DeliveryRow))),
      Effect.orDie
    )
  })

const AttemptRow = Schema.Struct({
  attempt: Schema.Number,
  status: Schema.NullOr(Schema.Number),
  result: Schema.String,
  error: Schema.NullOr(Schema.String),
  latency_ms: Schema.Number,
  next_ms: Schema.NullOr(Schema.Number)
})

export const attemptRows = (deliveryId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT attempt, status, result, error, latency_ms, ${sql.literal(millis("next_attempt_at"))} AS next_ms
      FROM events.delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(AttemptRow))),
      Effect.orDie
    )
  })

export const drain = (worker = "worker-1") => Effect.flatMap(Delivery.Delivery, (d) => d.drain(worker))
