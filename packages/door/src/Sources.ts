/**
 * Sources: the entry points of the door. A CloudEvents Source verifies Standard Webhooks signatures with its
 * `whsec_` secret, shown once at creation or rotation and stored sealed (the door must compute HMACs with it);
 * after a rotation the previous secret keeps working for 24 hours. A Source is active, paused (requests are
 * refused with 503 until it is resumed) or archived (410, for good).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"

/** @since 0.1.0 @category models */
export const SourceStatus = Schema.Literal("active", "paused", "archived")
/** @since 0.1.0 @category models */
export type SourceStatus = typeof SourceStatus.Type

/** @since 0.1.0 @category models */
export const Source = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  type: Schema.Literal("cloudevents", "webhook"),
  template: Schema.NullOr(Schema.String),
  status: SourceStatus,
  pipeline_id: Schema.NullOr(Schema.String),
  stage_id: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Source = typeof Source.Type

/** @since 0.1.0 @category errors */
export class SourceNotFound extends Data.TaggedError("SourceNotFound")<{ readonly id: string }> {}

/** How long a rotated-out secret still verifies (spec: 24 hours). @since 0.1.0 @category constants */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

const SEAL_PURPOSE = "door.source-secret"

/** @since 0.1.0 @category tags */
export class Sources extends Context.Tag("@service/door/Sources")<Sources, {
  /** A new CloudEvents Source and its secret, which is shown this once. */
  readonly create: (
    workspaceId: string,
    input: { readonly name: string; readonly pipelineId?: string | undefined; readonly stageId?: string | undefined }
  ) => Effect.Effect<{ readonly source: Source; readonly secret: Redacted.Redacted<string> }>
  readonly get: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Source>>
  readonly setStatus: (workspaceId: string, id: string, status: SourceStatus) => Effect.Effect<Source, SourceNotFound>
  /** A new secret (shown once); the previous one verifies for 24 more hours. */
  readonly rotateSecret: (workspaceId: string, id: string) => Effect.Effect<Redacted.Redacted<string>, SourceNotFound>
  /** The Source behind a door address and the secrets that verify for it now (unsealed), by id alone. */
  readonly forIntake: (id: string) => Effect.Effect<Option.Option<{ readonly source: Source; readonly secrets: ReadonlyArray<string> }>>
}>() {}

const SourceRow = Schema.Struct({
  ...Source.fields,
  secret_sealed: Schema.NullOr(Schema.String),
  previous_secret_sealed: Schema.NullOr(Schema.String),
  previous_valid_until: Schema.NullOr(Schema.DateFromSelf)
})
const decodeRows = Schema.decodeUnknown(Schema.Array(SourceRow))
const columns = "id, workspace_id, name, type, template, status, pipeline_id, stage_id, secret_sealed, previous_secret_sealed, previous_valid_until"

const toSource = (row: typeof SourceRow.Type): Source => ({
  id: row.id,
  workspace_id: row.workspace_id,
  name: row.name,
  type: row.type,
  template: row.template,
  status: row.status,
  pipeline_id: row.pipeline_id,
  stage_id: row.stage_id
})

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto

  const rowsWhere = (workspaceId: string | undefined, id: string) =>
    sql`SELECT ${sql.literal(columns)} FROM door.sources
        WHERE id = ${id} ${workspaceId === undefined ? sql`` : sql`AND workspace_id = ${workspaceId}`}`.pipe(
      Effect.flatMap(decodeRows),
      Effect.orDie
    )

  const create = (
    workspaceId: string,
    input: { readonly name: string; readonly pipelineId?: string | undefined; readonly stageId?: string | undefined }
  ) =>
    Effect.gen(function*() {
      const secret = yield* crypto.webhookSecret()
      const sealed = yield* crypto.seal(SEAL_PURPOSE, Redacted.value(secret))
      const id = `src_${randomBytes(12).toString("hex")}`
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* sql`INSERT INTO door.sources (id, workspace_id, name, type, status, secret_sealed, pipeline_id, stage_id, created_at)
        VALUES (${id}, ${workspaceId}, ${input.name}, 'cloudevents', 'active', ${sealed}, ${input.pipelineId ?? null},
                ${input.stageId ?? null}, ${at})`.pipe(Effect.orDie)
      const source: Source = {
        id,
        workspace_id: workspaceId,
        name: input.name,
        type: "cloudevents",
        template: null,
        status: "active",
        pipeline_id: input.pipelineId ?? null,
        stage_id: input.stageId ?? null
      }
      return { source, secret }
    })

  const get = (workspaceId: string, id: string) =>
    Effect.map(rowsWhere(workspaceId, id), (rows) => Option.map(Option.fromNullable(rows[0]), toSource))

  const setStatus = (workspaceId: string, id: string, status: SourceStatus) =>
    Effect.gen(function*() {
      const current = yield* get(workspaceId, id)
      if (Option.isNone(current)) return yield* new SourceNotFound({ id })
      // Archived is for good.
      if (current.value.status === "archived") return current.value
      yield* sql`UPDATE door.sources SET status = ${status} WHERE id = ${id}`.pipe(Effect.orDie)
      return { ...current.value, status }
    })

  const rotateSecret = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const rows = yield* rowsWhere(workspaceId, id)
      const row = rows[0]
      if (row === undefined) return yield* new SourceNotFound({ id })
      const secret = yield* crypto.webhookSecret()
      const sealed = yield* crypto.seal(SEAL_PURPOSE, Redacted.value(secret))
      const until = new Date((yield* Clock.currentTimeMillis) + ROTATION_OVERLAP_MS).toISOString()
      yield* sql`UPDATE door.sources SET secret_sealed = ${sealed}, previous_secret_sealed = ${row.secret_sealed},
          previous_valid_until = ${until} WHERE id = ${id}`.pipe(Effect.orDie)
      return secret
    })

  const unseal = (sealed: string) =>
    crypto.open(SEAL_PURPOSE, sealed).pipe(Effect.map((bytes) => Buffer.from(bytes).toString("utf8")), Effect.orDie)

  const forIntake = (id: string) =>
    Effect.gen(function*() {
      const row = (yield* rowsWhere(undefined, id))[0]
      if (row === undefined) return Option.none()
      const now = yield* Clock.currentTimeMillis
      const secrets: Array<string> = []
      if (row.secret_sealed !== null) secrets.push(yield* unseal(row.secret_sealed))
      if (row.previous_secret_sealed !== null && row.previous_valid_until !== null && row.previous_valid_until.getTime() > now) {
        secrets.push(yield* unseal(row.previous_secret_sealed))
      }
      return Option.some({ source: toSource(row), secrets })
    })

  return Sources.of({ create, get, setStatus, rotateSecret, forIntake })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Sources, never, SqlClient.SqlClient | Crypto> = Layer.effect(Sources, make)
