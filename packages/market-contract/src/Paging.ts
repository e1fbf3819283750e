/**
 * Keyset pagination for every paginating operation: a sealed cursor that carries the contract version, the
 * corpus snapshot, a digest of the operation and its filters, and the position of the last row read (a tuple
 * of the ordering keys); the `WHERE` and `ORDER BY` for a list of ordering keys; and the page built from a
 * limit-plus-one read, so `hasMore` never guesses from `returned === limit`.
 *
 * A query module reads `limit + 1` rows ordered by {@link orderBy}, after {@link after} the resumed position,
 * then hands them to {@link finish}.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Crypto } from "@service/core/Crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type { PageInfo } from "./Envelope.js"
import { CONTRACT_VERSION } from "./internal/refs.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"

/**
 * The ordering key values of the last row read, in {@link Key} order.
 *
 * @since 0.1.0 @category models
 */
export type Position = ReadonlyArray<string | number | null>

/**
 * What a cursor must match to resume: the operation, the corpus snapshot and the digest of the filters
 * (including anything that changes the ordering, such as a compare_period or the text rank's presence).
 *
 * @since 0.1.0 @category models
 */
export interface PageRequest {
  readonly operation: string
  readonly snapshotId: string
  readonly filterDigest: string
}

/**
 * One ordering key: a SQL expression, its direction, and the type its cursor value is cast to. The last key
 * must make the order total (a row id).
 *
 * @since 0.1.0 @category models
 */
export interface Key {
  readonly expression: Fragment
  readonly direction: "asc" | "desc"
  readonly type: "text" | "bigint" | "float8" | "numeric" | "date" | "int"
}

const Payload = Schema.Tuple(
  Schema.Literal(CONTRACT_VERSION),
  Schema.String,
  Schema.String,
  Schema.Array(Schema.NullOr(Schema.Union(Schema.String, Schema.Number)))
)

// The operation and the filters travel as one short digest: a cursor only has to tell "same request" apart.
const requestDigest = (request: PageRequest) =>
  createHash("sha256").update(`${request.operation}\u0000${request.filterDigest}`).digest("base64url").slice(0, 16)

/**
 * A short digest of the filters a page was read with (their JSON, so build the value in a stable key order):
 * what {@link PageRequest.filterDigest} holds.
 *
 * @since 0.1.0 @category cursors
 */
export const filterDigest = (filters: unknown): string =>
  createHash("sha256").update(JSON.stringify(filters)).digest("base64url").slice(0, 22)

/**
 * Seals a cursor for the position after `position`.
 *
 * @since 0.1.0 @category cursors
 */
export const seal = (request: PageRequest, position: Position): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) =>
    crypto.sealJson("cursor", [CONTRACT_VERSION, request.snapshotId, requestDigest(request), position]).pipe(Effect.orDie))

/**
 * Opens the cursor of a request (none when the request has no cursor). A cursor this layer did not seal, an
 * altered one, one from another contract version, operation or filters gives `invalid_cursor`; one from
 * another corpus snapshot gives `cursor_stale`.
 *
 * @since 0.1.0 @category cursors
 */
export const resume = (
  cursor: string | undefined,
  request: PageRequest
): Effect.Effect<Option.Option<Position>, MarketDataRefusal, Crypto> =>
  Effect.gen(function*() {
    if (cursor === undefined) return Option.none()
    const crypto = yield* Crypto
    const opened = yield* crypto.openJson("cursor", cursor.trim()).pipe(
      Effect.flatMap(Schema.decodeUnknown(Payload)),
      Effect.option
    )
    if (Option.isNone(opened)) {
      return yield* refuse(
        "invalid_cursor",
        "The cursor was not issued by this layer, was altered, or comes from an older contract version.",
        "Repeat the request without a cursor to start from the first page.",
        { field: "cursor" }
      )
    }
    const [, snapshotId, digest, position] = opened.value
    if (digest !== requestDigest(request)) {
      return yield* refuse(
        "invalid_cursor",
        "The cursor belongs to a request with different filters; a cursor only resumes the exact request that issued it.",
        "Repeat the request without a cursor, or send the same filters as the request that returned it.",
        { field: "cursor" }
      )
    }
    if (snapshotId !== request.snapshotId) {
      return yield* refuse(
        "cursor_stale",
        "The corpus was republished since this cursor was issued, so its positions no longer apply.",
        "Repeat the request without a cursor to read the current corpus from the first page.",
        { field: "cursor" }
      )
    }
    return Option.some(position)
  })

/**
 * `ORDER BY` for the keys.
 *
 * @since 0.1.0 @category sql
 */
export const orderBy = (sql: SqlClient.SqlClient, keys: ReadonlyArray<Key>): Fragment =>
  sql.csv(keys.map((key) => (key.direction === "asc" ? sql`${key.expression} ASC` : sql`${key.expression} DESC`)))

const cast = (sql: SqlClient.SqlClient, key: Key, value: string | number | null) =>
  sql`${value}::${sql.literal(key.type)}`

/**
 * The conditions that keep only rows after `position` in the keys' order (none on a first page). Keys that
 * all ascend compare as one row value, which an index on the same columns serves; mixed directions expand to
 * the equivalent disjunction. Key values are never null (order by a coalesced expression instead).
 *
 * @since 0.1.0 @category sql
 */
export const after = (
  sql: SqlClient.SqlClient,
  keys: ReadonlyArray<Key>,
  position: Option.Option<Position>
): ReadonlyArray<Fragment> => {
  if (Option.isNone(position)) return []
  const values = position.value
  if (values.length !== keys.length) return [sql`FALSE`]
  if (keys.every((key) => key.direction === "asc")) {
    return [
      sql`(${sql.csv(keys.map((key) => key.expression))}) > (${sql.csv(keys.map((key, i) => cast(sql, key, values[i] ?? null)))})`
    ]
  }
  const branches = keys.map((key, i) => {
    const equal = keys.slice(0, i).map((prior, j) => sql`${prior.expression} = ${cast(sql, prior, values[j] ?? null)}`)
    const beyond = key.direction === "asc"
      ? sql`${key.expression} > ${cast(sql, key, values[i] ?? null)}`
      : sql`${key.expression} < ${cast(sql, key, values[i] ?? null)}`
    return sql`(${sql.and([...equal, beyond])})`
  })
  return [sql`(${sql.or(branches)})`]
}

/**
 * The page from a read of up to `limit + 1` rows: the rows to return, and the page info with a cursor
 * positioned after the last returned row when more rows exist.
 *
 * @since 0.1.0 @category pages
 */
export const finish = <Row>(
  fetched: ReadonlyArray<Row>,
  options: { readonly limit: number; readonly request: PageRequest; readonly positionOf: (row: Row) => Position }
): Effect.Effect<{ readonly rows: ReadonlyArray<Row>; readonly page: PageInfo }, never, Crypto> =>
  Effect.gen(function*() {
    const hasMore = fetched.length > options.limit
    const rows = fetched.slice(0, options.limit)
    const last = rows[rows.length - 1]
    const nextCursor = hasMore && last !== undefined ? yield* seal(options.request, options.positionOf(last)) : null
    return { rows, page: { limit: options.limit, returned: rows.length, hasMore, nextCursor } }
  })
