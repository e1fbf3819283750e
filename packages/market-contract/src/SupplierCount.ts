/**
 * count_suppliers: the exact number of published supplier observations a narrowing matches. Same
 * narrowing and refusals as search; never an estimate: a count that cannot finish within the statement
 * timeout is refused with `market_data_timeout`.
 *
 * @since 0.1.0
 */
import type { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Envelope, type SemanticWarning } from "./Envelope.js"
import { withStatementTimeout } from "./internal/statementTimeout.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import type { MarketDataRefusal } from "./MarketError.js"
import * as Narrowing from "./SupplierNarrowing.js"
import { strict } from "./internal/fields.js"

/** Canonical input (HTTP): the narrowing fields with `source_slugs`. @since 0.1.0 @category models */
export const CountSuppliersInput = Schema.Struct({ ...Narrowing.fields, ...Narrowing.canonicalFields }).annotations({
  ...strict,
  identifier: "CountSuppliersInput"
})
/** @since 0.1.0 @category models */
export type CountSuppliersInput = typeof CountSuppliersInput.Type

/** Model-facing input (MCP, CLI). @since 0.1.0 @category models */
export const CountSuppliersModelInput = Schema.Struct(Narrowing.fields).annotations({
  ...strict,
  identifier: "CountSuppliersModelInput"
})

/** @since 0.1.0 @category models */
export const SupplierCount = Schema.Struct({
  count: Schema.Number.annotations({ description: "Exact number of matching published observations (not companies)." })
}).annotations({ identifier: "SupplierCount" })

/** @since 0.1.0 @category models */
export const CountSuppliersEnvelope = Envelope(SupplierCount).annotations({ identifier: "CountSuppliersEnvelope" })

const observationCount: SemanticWarning = {
  code: "observation_not_company",
  message: "The count is of published observations, not of unique companies, market size or demand."
}

/** @since 0.1.0 @category queries */
export const countSuppliers = (
  input: CountSuppliersInput
): Effect.Effect<EnvelopeOf<typeof SupplierCount.Type>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const narrowed = yield* Narrowing.narrow(market, publication.snapshotId, input)
    yield* Narrowing.probeSelectivity(sql, narrowed)
    const rows = yield* withStatementTimeout(market)((timed) =>
      timed<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations o WHERE ${sql.and(narrowed.conditions)}`
    )
    const count = rows[0]?.n ?? 0
    return yield* market.envelope({
      operation: "count_suppliers",
      publication,
      startedAt,
      request: narrowed.request,
      normalizations: narrowed.normalizations,
      ...(narrowed.queryInterpretation === undefined ? {} : { queryInterpretation: narrowed.queryInterpretation }),
      results: { count },
      page: null,
      categories: ["supplier_or_organization_evidence"],
      warnings: [observationCount],
      empty: count === 0,
      rowsExamined: count
    })
  }).pipe(Effect.withSpan("MarketData.countSuppliers", { captureStackTrace: false }))
