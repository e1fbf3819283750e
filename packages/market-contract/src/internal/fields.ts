/**
 * Field schemas and settings every market-data input shares, defined once.
 */
import * as Schema from "effect/Schema"

/** Input structs refuse properties they do not declare. */
export const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** Scopes that satisfy every market-data read (OR-listed). */
export const readScopes = ["market_data:read", "context:read"] as const

/** Text that is not blank, at most `max` characters. */
export const TrimmedText = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

const isCalendarDate = (s: string): boolean => {
  const date = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === s
}

/** A calendar date, `YYYY-MM-DD`. */
export const IsoDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a date is written YYYY-MM-DD" }),
  Schema.filter(isCalendarDate, { message: () => "not a calendar date" })
)

/** A page size from 1 to `max`. */
export const Limit = (max: number) =>
  Schema.Int.pipe(
    Schema.between(1, max, { message: () => `limit must be an integer from 1 to ${max}` })
  )
