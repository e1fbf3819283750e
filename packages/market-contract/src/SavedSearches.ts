/**
 * Saved searches that alert: a workspace saves a market-data search (opportunities, awards or risk marks) and the
 * ledger records `search.matched` when a new publication adds records that match it, delivered by the same
 * subscriptions and Destinations as every catalog event (decision 0062).
 *
 * - The criteria are the search's own input without paging, checked by running the search once when saved: a
 *   search the contract refuses (too broad, an unknown state) is refused as `criteria_refused` with its reason.
 * - What a search matched is kept by its rows' `record_fingerprint` (which survives reloads), up to {@link MAX_TRACKED}
 *   records in the search's own order; a record of a new publication that is not among them was added.
 * - {@link SavedSearches.check} compares every saved search with the serving publication once: the search runs,
 *   then one transaction per saved search (under its row lock, checked again) records the event and the new
 *   matches, so each publication alerts a search at most once, whichever workers check at the same time.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Principal } from "@service/core/Principal"
import { RequestContext, withFreshRequest } from "@service/core/RequestContext"
import { EventLedger } from "@service/events/EventLedger"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as Awards from "./Awards.js"
import { maxPageSize } from "./Limits.js"
import { MarketData } from "./MarketData.js"
import { codeRules, type MarketDataRefusal } from "./MarketError.js"
import * as Opportunities from "./Opportunities.js"
import * as Risks from "./Risks.js"
import { refuse, type SavedSearchRefusal } from "./SavedSearchRefusal.js"

/** The searches that can be saved. @since 0.1.0 @category models */
export const Kind = Schema.Literal("opportunities", "awards", "risks")
/** @since 0.1.0 @category models */
export type Kind = typeof Kind.Type

/** Records of one saved search compared between publications, at most. @since 0.1.0 @category constants */
export const MAX_TRACKED = 1000

/** Saved searches per workspace, at most. @since 0.1.0 @category constants */
export const MAX_PER_WORKSPACE = 100

/** Added records whose refs an alert carries, at most. @since 0.1.0 @category constants */
export const MAX_REFS_PER_ALERT = 20

/** A saved search as its operations answer it. @since 0.1.0 @category models */
export const SavedSearchView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  kind: Kind,
  criteria: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  matching: Schema.Number.annotations({ description: "Records matched at the last comparison (at most 1,000 are compared)." }),
  complete: Schema.Boolean.annotations({ description: "False when more records matched than are compared." }),
  checked_publication: Schema.NullOr(Schema.String).annotations({ description: "The publication it was last compared with." }),
  checked_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "SavedSearch" })
/** @since 0.1.0 @category models */
export type SavedSearchView = typeof SavedSearchView.Type

/** What a caller asks to save. @since 0.1.0 @category models */
export interface SaveRequest {
  readonly name: string
  readonly kind: Kind
  readonly criteria: Readonly<Record<string, unknown>>
}

/** @since 0.1.0 @category tags */
export class SavedSearches extends Context.Tag("@service/market-contract/SavedSearches")<SavedSearches, {
  /** Saves a search after running it once (its matches are the baseline: no alert for what is already there). */
  readonly create: (principal: Principal, request: SaveRequest) => Effect.Effect<SavedSearchView, SavedSearchRefusal, RequestContext>
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<SavedSearchView>>
  /** Deletes one; it alerts no more. */
  readonly remove: (workspaceId: string, id: string) => Effect.Effect<void, SavedSearchRefusal>
  /** Compares every saved search not yet compared with the serving publication; answers how many alerted. */
  readonly check: Effect.Effect<number>
  /** {@link check} for ever, every `SERVICE_SEARCH_ALERTS_EVERY` (default 1 minute): what workers run. */
  readonly watch: Effect.Effect<never>
}>() {}

/**
 * How often workers compare saved searches with the serving publication: `SERVICE_SEARCH_ALERTS_EVERY`, default
 * 1 minute, so an alert follows a publication within about a minute.
 *
 * @since 0.1.0 @category config
 */
export const checkEveryConfig = Config.duration("SERVICE_SEARCH_ALERTS_EVERY").pipe(
  Config.withDefault(Duration.minutes(1)),
  Config.validate({ message: "must be at least 1 second", validation: (d) => Duration.toMillis(d) >= 1000 }),
  Config.withDescription("How often workers compare saved searches with the serving publication.")
)

interface Page {
  /** Each row's fingerprint (the record's, which survives reloads) and its ref. */
  readonly rows: ReadonlyArray<{ readonly fingerprint: string; readonly ref: string }>
  readonly next: string | null
}

interface Searcher {
  readonly page: (criteria: unknown, cursor: string | null) => Effect.Effect<Page, ParseResult.ParseError | MarketDataRefusal, MarketData | RequestContext>
}

const pageOf = (envelope: {
  readonly results: ReadonlyArray<{ readonly record_ref: string; readonly record_fingerprint: string }>
  readonly page: { readonly hasMore: boolean; readonly nextCursor: string | null } | null
}): Page => ({
  rows: envelope.results.map((row) => ({ fingerprint: row.record_fingerprint, ref: row.record_ref })),
  next: envelope.page !== null && envelope.page.hasMore ? envelope.page.nextCursor : null
})

const withPaging = (criteria: unknown, cursor: string | null): unknown =>
  typeof criteria === "object" && criteria !== null
    ? { ...criteria, limit: maxPageSize, ...(cursor === null ? {} : { cursor }) }
    : criteria

const searchers: { readonly [K in Kind]: Searcher } = {
  opportunities: {
    page: (criteria, cursor) =>
      Effect.flatMap(Schema.decodeUnknown(Opportunities.SearchOpportunitiesInput)(withPaging(criteria, cursor)), (input) =>
        Effect.map(Opportunities.search(input), pageOf))
  },
  awards: {
    page: (criteria, cursor) =>
      Effect.flatMap(Schema.decodeUnknown(Awards.SearchAwardsInput)(withPaging(criteria, cursor)), (input) =>
        Effect.map(Awards.searchAwardRows(input), pageOf))
  },
  risks: {
    page: (criteria, cursor) =>
      Effect.flatMap(Schema.decodeUnknown(Risks.SearchRisksInput)(withPaging(criteria, cursor)), (input) =>
        Effect.map(Risks.searchRiskMarks(input), pageOf))
  }
}

/** What a search matches now: fingerprints in its order, each with a ref for the alert. */
interface Evaluation {
  readonly matched: ReadonlyArray<{ readonly fingerprint: string; readonly ref: string }>
  readonly complete: boolean
}

const Row = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  kind: Kind,
  criteria: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  matching: Schema.Number,
  complete: Schema.Boolean,
  checked_publication_id: Schema.NullOr(Schema.String),
  checked_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const columns = `id, workspace_id, name, kind, criteria::text AS criteria, matching, complete, checked_publication_id,
  ${iso("checked_at")} AS checked_at, ${iso("created_at")} AS created_at`

const toView = (row: typeof Row.Type): SavedSearchView => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  criteria: row.criteria,
  matching: row.matching,
  complete: row.complete,
  checked_publication: row.checked_publication_id,
  checked_at: row.checked_at,
  created_at: row.created_at
})

/**
 * A market refusal of the saved criteria, as this group's refusal, keeping the search's recovery: criteria too broad
 * to save are `criteria_refused` (narrow the query); a wrong value in them (an unknown state, mark kind or filter
 * value) is `invalid_field_value` naming the field (fix the arguments), not advice to narrow.
 */
const fromMarket = (refusal: MarketDataRefusal): SavedSearchRefusal => {
  const rule = codeRules[refusal.semanticCode]
  if (rule.retryable) return refuse("saved_searches_unavailable", refusal.why, refusal.suggestedCorrection)
  const field = { field: `criteria${refusal.field === undefined ? "" : `.${refusal.field}`}` }
  return rule.action === "narrow_query"
    ? refuse("criteria_refused", `${refusal.semanticCode}: ${refusal.why}`, refusal.suggestedCorrection, field)
    : refuse("invalid_field_value", `${refusal.semanticCode}: ${refusal.why}`, refusal.suggestedCorrection, field)
}

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const market = yield* MarketData
  const ledger = yield* EventLedger
  const marketContext = yield* Effect.context<MarketData>()

  const evaluate = (kind: Kind, criteria: unknown): Effect.Effect<Evaluation, ParseResult.ParseError | MarketDataRefusal, RequestContext> =>
    Effect.gen(function*() {
      const searcher = searchers[kind]
      const matched: Array<{ fingerprint: string; ref: string }> = []
      const seen = new Set<string>()
      let cursor: string | null = null
      do {
        const page: Page = yield* searcher.page(criteria, cursor)
        for (const row of page.rows) {
          if (matched.length >= MAX_TRACKED) break
          if (seen.has(row.fingerprint)) continue
          seen.add(row.fingerprint)
          matched.push(row)
        }
        cursor = page.next
      } while (cursor !== null && matched.length < MAX_TRACKED)
      return { matched, complete: cursor === null }
    }).pipe(Effect.provide(marketContext))

  const storeMatches = (id: string, evaluation: Evaluation, publication: string, at: number) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM alerts.saved_search_matches WHERE saved_search_id = ${id}`
      yield* sql`INSERT INTO alerts.saved_search_matches (saved_search_id, fingerprint)
        SELECT ${id}, f.value FROM jsonb_array_elements_text(${JSON.stringify(evaluation.matched.map((m) => m.fingerprint))}::jsonb) AS f(value)
        ON CONFLICT DO NOTHING`
      yield* sql`UPDATE alerts.saved_searches SET checked_publication_id = ${publication}, checked_at = ${new Date(at).toISOString()}::timestamptz,
          matching = ${evaluation.matched.length}, complete = ${evaluation.complete}
        WHERE id = ${id}`
    }).pipe(Effect.orDie)

  const create = (principal: Principal, request: SaveRequest) =>
    Effect.gen(function*() {
      for (const field of ["limit", "cursor"]) {
        if (field in request.criteria) {
          return yield* refuse(
            "invalid_field_value",
            `criteria.${field} is paging, which a saved search does not keep.`,
            `Save the criteria without ${field}.`,
            { field: `criteria.${field}` }
          )
        }
      }
      const publication = yield* market.servingPublication.pipe(Effect.mapError(fromMarket))
      const evaluation = yield* evaluate(request.kind, request.criteria).pipe(
        Effect.catchTags({
          ParseError: (error) =>
            Effect.fail(refuse(
              "invalid_field_value",
              `criteria are not a valid ${request.kind} search: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 400)}`,
              `Give the fields of the ${request.kind} search (its capability lists them), without limit or cursor.`,
              { field: "criteria" }
            )),
          MarketDataRefusal: (refusal) => Effect.fail(fromMarket(refusal))
        })
      )
      const at = yield* Clock.currentTimeMillis
      const id = `srch_${randomBytes(12).toString("hex")}`
      const person = Option.getOrNull(Option.map(principal.person, (p) => p.id))
      const inserted = yield* sql.withTransaction(Effect.gen(function*() {
        // Counted under a lock on the workspace's row, so two saves at once cannot pass the limit together.
        yield* sql`SELECT id FROM core.workspaces WHERE id = ${principal.workspace.id} FOR UPDATE`
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM alerts.saved_searches
          WHERE workspace_id = ${principal.workspace.id} AND deleted_at IS NULL`
        if ((count?.n ?? 0) >= MAX_PER_WORKSPACE) return false
        yield* sql`INSERT INTO alerts.saved_searches (id, workspace_id, name, kind, criteria, created_by, created_at)
          VALUES (${id}, ${principal.workspace.id}, ${request.name}, ${request.kind}, ${JSON.stringify(request.criteria)}::jsonb, ${person},
            ${new Date(at).toISOString()}::timestamptz)`
        yield* storeMatches(id, evaluation, publication.snapshotId, at)
        return true
      })).pipe(Effect.orDie)
      if (!inserted) {
        return yield* refuse(
          "saved_search_limit",
          `The workspace already holds ${MAX_PER_WORKSPACE} saved searches.`,
          "Delete a saved search you no longer need, then save this one."
        )
      }
      const rows = yield* sql`SELECT ${sql.literal(columns)} FROM alerts.saved_searches WHERE id = ${id}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
      const row = rows[0]
      if (row === undefined) return yield* Effect.dieMessage(`SavedSearches: ${id} was not stored`)
      return toView(row)
    }).pipe(Effect.withSpan("SavedSearches.create", { captureStackTrace: false, attributes: { kind: request.kind } }))

  const list = (workspaceId: string) =>
    sql`SELECT ${sql.literal(columns)} FROM alerts.saved_searches WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL
      ORDER BY created_at DESC, id LIMIT ${MAX_PER_WORKSPACE}`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows.map(toView)),
      Effect.orDie
    )

  const remove = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const rows = yield* sql`UPDATE alerts.saved_searches SET deleted_at = ${at}::timestamptz
        WHERE workspace_id = ${workspaceId} AND id = ${id} AND deleted_at IS NULL RETURNING id`.pipe(Effect.orDie)
      if (rows.length === 0) {
        return yield* refuse("saved_search_not_found", `No saved search ${id} in this workspace.`, "List the workspace's saved searches and use one of their ids.", {
          field: "id"
        })
      }
    })

  /**
   * Compares one saved search with `publication`. The search runs outside any transaction (the market reads may
   * use another connection); the comparison and its writes then commit under the saved search's row lock, checked
   * again, so a worker that compared it meanwhile wins and this one records nothing.
   */
  const checkOne = (row: typeof Row.Type, publication: string) =>
    Effect.gen(function*() {
      const evaluated = yield* Effect.either(evaluate(row.kind, row.criteria))
      const at = yield* Clock.currentTimeMillis
      return yield* sql.withTransaction(Effect.gen(function*() {
        const still = yield* sql`SELECT id FROM alerts.saved_searches
          WHERE id = ${row.id} AND deleted_at IS NULL AND checked_publication_id IS DISTINCT FROM ${publication}
          FOR UPDATE`.pipe(Effect.orDie)
        if (still.length === 0) return false
        if (evaluated._tag === "Left") {
          // Criteria the contract no longer answers (a value the new corpus lacks): compared, nothing to alert.
          yield* Effect.logWarning(`Saved search ${row.id} could not be compared with publication ${publication}`, evaluated.left)
          yield* sql`UPDATE alerts.saved_searches SET checked_publication_id = ${publication}, checked_at = ${new Date(at).toISOString()}::timestamptz
            WHERE id = ${row.id}`.pipe(Effect.orDie)
          return false
        }
        const previous = new Set(
          (yield* sql<{ fingerprint: string }>`SELECT fingerprint FROM alerts.saved_search_matches WHERE saved_search_id = ${row.id}`.pipe(Effect.orDie))
            .map((r) => r.fingerprint)
        )
        const added = evaluated.right.matched.filter((m) => !previous.has(m.fingerprint))
        if (added.length > 0) {
          yield* ledger.record({
            workspaceId: row.workspace_id,
            name: "search.matched",
            subject: `saved_search/${row.id}`,
            payload: {
              workspace_id: row.workspace_id,
              occurred_at: new Date(at).toISOString(),
              saved_search_id: row.id,
              name: row.name,
              kind: row.kind,
              publication,
              added: added.length,
              record_refs: added.slice(0, MAX_REFS_PER_ALERT).map((m) => m.ref),
              complete: evaluated.right.complete
            }
          })
        }
        yield* storeMatches(row.id, evaluated.right, publication, at)
        return added.length > 0
      })).pipe(Effect.orDie)
    })

  const check = Effect.gen(function*() {
    const serving = yield* Effect.option(market.servingPublication)
    if (Option.isNone(serving)) return 0
    const publication = serving.value.snapshotId
    const due = yield* sql`SELECT ${sql.literal(columns)} FROM alerts.saved_searches
      WHERE deleted_at IS NULL AND checked_publication_id IS DISTINCT FROM ${publication} ORDER BY id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.orDie
    )
    let alerted = 0
    for (const row of due) if (yield* withFreshRequest("belt")(checkOne(row, publication))) alerted++
    return alerted
  }).pipe(Effect.withSpan("SavedSearches.check", { captureStackTrace: false }))

  const every = yield* Effect.orDie(checkEveryConfig)
  // A failed round (an outage) is logged and tried again next round: the comparison is idempotent.
  const watch = Effect.forever(
    Effect.zipRight(
      check.pipe(Effect.catchAllCause((cause) => Effect.logWarning("Saved searches could not be compared", cause))),
      Effect.sleep(every)
    )
  )

  return SavedSearches.of({ create, list, remove, check, watch })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<SavedSearches, never, SqlClient.SqlClient | MarketData | EventLedger> = Layer.effect(SavedSearches, make)
