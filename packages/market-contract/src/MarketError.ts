/**
 * Market-data refusals: one class over a closed vocabulary of semantic codes, each with exactly one recovery
 * action, so every surface can tell a caller what to do next.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const SemanticCode = Schema.Literal(
  "query_too_broad",
  "query_not_selective",
  "invalid_field_value",
  "unknown_state",
  "invalid_observed_kind",
  "invalid_mark_kind",
  "deadline_not_available",
  "amount_requires_currency_and_scope",
  "unknown_filter_value",
  "unknown_facet",
  "batch_too_large",
  "invalid_cursor",
  "cursor_stale",
  "market_data_timeout",
  "market_data_unavailable",
  "serving_projection_unavailable",
  "serving_projection_stale",
  "invalid_record_ref"
)
/** @since 0.1.0 @category models */
export type SemanticCode = typeof SemanticCode.Type

/** @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal(
  "narrow_query",
  "fix_arguments",
  "restart_without_cursor",
  "retry_backoff",
  "search_again"
)
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

interface CodeRule extends Refusal.RefusalRule {
  readonly action: RecoveryAction
  /** HTTP status chosen for the code (docs/decisions/0009-market-data-refusal-statuses.md). */
  readonly status: 400 | 404 | 409 | 503 | 504
}

/**
 * The one-to-one table from semantic code to recovery action, retryability and HTTP status.
 *
 * @since 0.1.0 @category models
 */
export const codeRules: { readonly [K in SemanticCode]: CodeRule } = {
  query_too_broad: { action: "narrow_query", retryable: false, status: 400, description: "search or count has no narrowing dimension" },
  query_not_selective: { action: "narrow_query", retryable: false, status: 400, description: "a text query alone matches more than one page can read" },
  invalid_field_value: { action: "fix_arguments", retryable: false, status: 400, description: "a value is structurally wrong (shape, range, enum, unknown property)" },
  unknown_state: { action: "fix_arguments", retryable: false, status: 400, description: "the state is not one of the 32 states or their aliases" },
  invalid_observed_kind: { action: "fix_arguments", retryable: false, status: 400, description: "observed_kind is not one of the allowed record kinds" },
  invalid_mark_kind: { action: "fix_arguments", retryable: false, status: 400, description: "the risk mark kind is not one of the allowed kinds" },
  deadline_not_available: { action: "fix_arguments", retryable: false, status: 400, description: "a date-deadline question: the corpus has no reliable deadlines" },
  amount_requires_currency_and_scope: { action: "fix_arguments", retryable: false, status: 400, description: "an amount filter without currency and amount_scope" },
  unknown_filter_value: { action: "fix_arguments", retryable: false, status: 400, description: "a filter value the corpus does not hold" },
  unknown_facet: { action: "fix_arguments", retryable: false, status: 400, description: "facets names an unknown corpus dimension" },
  batch_too_large: { action: "fix_arguments", retryable: false, status: 400, description: "screen_risks has more than 50 RFCs" },
  invalid_cursor: { action: "restart_without_cursor", retryable: false, status: 400, description: "the cursor was not issued for these filters" },
  cursor_stale: { action: "restart_without_cursor", retryable: false, status: 409, description: "the corpus was republished under the cursor" },
  market_data_timeout: { action: "retry_backoff", retryable: true, status: 504, description: "the statement did not finish within the statement timeout" },
  market_data_unavailable: { action: "retry_backoff", retryable: true, status: 503, description: "the warehouse is unreachable" },
  serving_projection_unavailable: { action: "retry_backoff", retryable: true, status: 503, description: "no publication is active" },
  serving_projection_stale: { action: "retry_backoff", retryable: true, status: 503, description: "the active publication is past its freshness bound" },
  invalid_record_ref: { action: "search_again", retryable: false, status: 404, description: "the record_ref was not issued by this layer or is gone" }
}

/**
 * A market-data refusal. `allowedValues` is set when a value fell outside a closed set; `field` names the
 * request field at fault, when there is one.
 *
 * @since 0.1.0 @category errors
 */
export class MarketDataRefusal extends Schema.TaggedError<MarketDataRefusal>("@service/market-contract/MarketDataRefusal")(
  "MarketDataRefusal",
  {
    semanticCode: SemanticCode,
    why: Schema.String,
    suggestedCorrection: Schema.String,
    field: Schema.optional(Schema.String),
    allowedValues: Schema.optional(Schema.Array(Schema.String)),
    allowedRange: Schema.optional(Refusal.AllowedRange)
  }
) {
  override get message(): string {
    return this.why
  }
  get retryable(): boolean {
    return codeRules[this.semanticCode].retryable
  }
  get recoveryAction(): RecoveryAction {
    return codeRules[this.semanticCode].action
  }
  get status(): number {
    return codeRules[this.semanticCode].status
  }
}

/**
 * The `market_data` block every surface attaches to a refusal.
 *
 * @since 0.1.0 @category models
 */
export const MarketDataBlock = Schema.Struct({
  semantic_code: SemanticCode,
  why: Schema.String,
  suggested_correction: Schema.String,
  retryable: Schema.Boolean,
  recovery: Schema.Struct({ action: RecoveryAction }),
  field: Schema.optional(Schema.String),
  allowed_values: Schema.optional(Schema.Array(Schema.String)),
  allowed_range: Schema.optional(Refusal.AllowedRange)
}).annotations({ identifier: "MarketDataBlock", description: "What went wrong and the next working call." })
/** @since 0.1.0 @category models */
export type MarketDataBlock = typeof MarketDataBlock.Type

/**
 * @since 0.1.0 @category conversions
 */
export const toBlock = (refusal: MarketDataRefusal): MarketDataBlock => ({
  semantic_code: refusal.semanticCode,
  why: refusal.why,
  suggested_correction: refusal.suggestedCorrection,
  retryable: refusal.retryable,
  recovery: { action: refusal.recoveryAction },
  ...(refusal.field === undefined ? {} : { field: refusal.field }),
  ...(refusal.allowedValues === undefined ? {} : { allowed_values: refusal.allowedValues }),
  ...(refusal.allowedRange === undefined ? {} : { allowed_range: refusal.allowedRange })
})

/** @since 0.1.0 @category constructors */
export const refuse = (
  semanticCode: SemanticCode,
  why: string,
  suggestedCorrection: string,
  extra: {
    readonly field?: string
    readonly allowedValues?: ReadonlyArray<string>
    readonly allowedRange?: Refusal.AllowedRange
  } = {}
): MarketDataRefusal =>
  new MarketDataRefusal({
    semanticCode,
    why,
    suggestedCorrection,
    ...(extra.field === undefined ? {} : { field: extra.field }),
    ...(extra.allowedValues === undefined ? {} : { allowedValues: extra.allowedValues }),
    ...(extra.allowedRange === undefined ? {} : { allowedRange: extra.allowedRange })
  })


/**
 * The market-data refusal codec: the `market_data` block, one status and recovery action per code.
 *
 * @since 0.1.0 @category codecs
 */
export const codec: Refusal.RefusalCodec<MarketDataRefusal, SemanticCode> = Refusal.makeCodec({
  key: "market_data",
  identifier: "MarketData",
  tag: "MarketDataRefusal",
  is: (u: unknown): u is MarketDataRefusal => u instanceof MarketDataRefusal,
  rules: codeRules,
  code: (refusal) => refusal.semanticCode,
  message: (refusal) => refusal.why,
  toBlock: (refusal) => toBlock(refusal),
  block: MarketDataBlock,
  invalidInput: (input) =>
    refuse("invalid_field_value", input.why, input.suggestedCorrection, {
      ...(input.field === undefined ? {} : { field: input.field }),
      ...(input.allowedValues === undefined ? {} : { allowedValues: input.allowedValues }),
      ...(input.allowedRange === undefined ? {} : { allowedRange: input.allowedRange })
    }),
  invalidInputCode: "invalid_field_value",
  codeField: "semantic_code",
  sample: (code) =>
    refuse(code, `Sample refusal: ${codeRules[code].description}.`, `Recover with ${codeRules[code].action}.`),
  // The cause stays in the server's log: it names hosts and ports.
  outage: () =>
    refuse(
      "market_data_unavailable",
      "The market-data store could not be reached or dropped the connection, so nothing was read.",
      "Retry the same call with backoff; nothing was charged."
    )
})
