/**
 * Metering: every successful call of a metered operation counts one unit for the caller's workspace
 * (spec: one aggregate response costs one credit whatever its group count; discovery is free). Counted
 * per UTC day in `core.usage`, so usage is readable and shared by every node.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const Usage = Schema.Struct({ operation: Schema.String, day: Schema.String, units: Schema.Number })
/** @since 0.1.0 @category models */
export type Usage = typeof Usage.Type

/** @since 0.1.0 @category tags */
export class Meter extends Context.Tag("@service/core/Meter")<Meter, {
  /** Adds `units` for the workspace and operation today. */
  readonly record: (usage: { readonly workspaceId: string; readonly operation: string; readonly units: number }) => Effect.Effect<void>
  /** The workspace's usage, newest day first. */
  readonly usage: (workspaceId: string) => Effect.Effect<ReadonlyArray<Usage>>
}>() {}

const UsageRow = Schema.Struct({ operation: Schema.String, day: Schema.String, units: Schema.NumberFromString })
const decodeRows = Schema.decodeUnknown(Schema.Array(UsageRow))

/** @since 0.1.0 @category constructors */
export const makeSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return Meter.of({
    record: ({ operation, units, workspaceId }) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const day = new Date(now).toISOString().slice(0, 10)
        yield* sql`INSERT INTO core.usage (workspace_id, operation, day, units)
          VALUES (${workspaceId}, ${operation}, ${day}::date, ${units})
          ON CONFLICT (workspace_id, day, operation) DO UPDATE SET units = core.usage.units + EXCLUDED.units`
      }).pipe(Effect.orDie, Effect.withSpan("Meter.record")),
    usage: (workspaceId) =>
      sql`SELECT operation, to_char(day, 'YYYY-MM-DD') AS day, units::text AS units
          FROM core.usage WHERE workspace_id = ${workspaceId} ORDER BY day DESC, operation`.pipe(
        Effect.flatMap(decodeRows),
        Effect.orDie
      )
  })
})

/** @since 0.1.0 @category layers */
export const layerSql: Layer.Layer<Meter, never, SqlClient.SqlClient> = Layer.effect(Meter, makeSql)
