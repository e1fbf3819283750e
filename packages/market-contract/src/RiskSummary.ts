/**
 * The compact risk summary a supplier, award or permit row carries when it publishes an RFC: how many published
 * administrative risk marks carry that RFC, of which kinds, whether any is in force and whether any is an
 * exoneration. The warehouse computes it per RFC at publish time with the same status meaning `screen_risks`
 * serves, so a search row shows the flag without a second call and `screen_risks` gives the marks.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The mark kinds the warehouse holds. @since 0.1.0 @category constants */
export const markKinds = ["efos", "sancion"] as const

/** @since 0.1.0 @category models */
export const MarkKind = Schema.Literal(...markKinds)
/** @since 0.1.0 @category models */
export type MarkKind = typeof MarkKind.Type

/** @since 0.1.0 @category models */
export const RiskSummary = Schema.Struct({
  mark_count: Schema.Number.annotations({ description: "How many published risk marks carry this RFC; 0 when none does." }),
  kinds: Schema.Array(MarkKind).annotations({
    description: "Their kinds, sorted, each once: efos (barred-supplier listing), sancion (sanction or disqualification)."
  }),
  any_active: Schema.Boolean.annotations({ description: "At least one of the marks is a listing in force as published." }),
  has_exoneration: Schema.Boolean.annotations({
    description: "At least one of the marks is an exoneration (desvirtuado, sentencia favorable)."
  })
}).annotations({ identifier: "RiskSummary" })
/** @since 0.1.0 @category models */
export type RiskSummary = typeof RiskSummary.Type

/**
 * The `risk` field of a row that can carry an RFC.
 *
 * @since 0.1.0 @category models
 */
export const RiskField = Schema.NullOr(RiskSummary).annotations({
  description:
    "Published risk marks linked by this row's RFC, summarized; null when the row publishes no RFC. A mark is a listing, not a conviction; screen_risks gives the marks themselves. Marks published without an RFC are not linked here."
})
