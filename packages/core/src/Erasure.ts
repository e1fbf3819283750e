/**
 * A person's erasure across every store that holds them (decision 0071). Each bundle that stores personal data
 * contributes erasers (`Bundle.erasers`); the application gathers them into one {@link Erasure} service, which the
 * CRM's erasure calls inside its own transaction. An eraser first says which raw forms of the person's values its
 * store holds (a phone as typed, a name before an update), then redacts, by link (rows that name the contact) and
 * by content (text that contains one of the values, whatever escaping it is stored with), and says how many rows
 * it redacted: counts, never values.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * The person's values, in the forms stores may hold them.
 *
 * @since 0.1.0 @category models
 */
export interface Values {
  readonly names: ReadonlyArray<string>
  readonly emails: ReadonlyArray<string>
  readonly phones: ReadonlyArray<string>
}

/**
 * Who is erased: the contact of a workspace, with their values as the CRM stores them plus, once collected, the
 * raw forms the stores found.
 *
 * @since 0.1.0 @category models
 */
export interface Subject {
  readonly workspaceId: string
  readonly contactId: string
  readonly values: Values
}

/**
 * What one store redacted.
 *
 * @since 0.1.0 @category models
 */
export const Redaction = Schema.Struct({
  store: Schema.String.annotations({ description: "The store: schema and table (`door.arrivals`)." }),
  redacted: Schema.Number.annotations({ description: "How many of its rows were redacted." })
}).annotations({ identifier: "Redaction" })
/** @since 0.1.0 @category models */
export type Redaction = typeof Redaction.Type

/**
 * A store's part of an erasure.
 *
 * @since 0.1.0 @category models
 */
export interface Eraser<R> {
  /** Schema and table (`door.arrivals`): what the erasure's answer names. */
  readonly store: string
  /** Raw forms of the person's values the store holds (read before anything is redacted). */
  readonly collect?: ((subject: Subject, matcher: Matcher) => Effect.Effect<Partial<Values>, never, R>) | undefined
  /** Redacts the person in the store; returns how many rows changed. */
  readonly erase: (subject: Subject, matcher: Matcher) => Effect.Effect<number, never, R>
}

/**
 * Declares an eraser.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(eraser: Eraser<R>): Eraser<R> => eraser

/**
 * Finds and removes the person's values in text.
 *
 * @since 0.1.0 @category models
 */
export interface Matcher {
  /** Whether the text holds one of the values, once JSON `\u` escapes and percent-encoding are decoded. */
  readonly test: (text: string) => boolean
  /** The text with every value replaced by `[erased]`; wholly `[erased]` when a value stays hidden in an escape. */
  readonly scrub: (text: string) => string
  /** A JSON value with every string that holds a value scrubbed (keys too); `changed` says whether any did. */
  readonly scrubJson: (value: unknown) => { readonly value: unknown; readonly changed: boolean }
  /** A PostgreSQL regular expression (for `~*`) that finds a value stored plainly, or an escape that may hide one. */
  readonly candidate: string
}

/** What a scrubbed value is replaced with. @since 0.1.0 @category constants */
export const ERASED = "[erased]"

const escapeRegExp = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Decodes what stores keep escaped: JSON `\uXXXX` and percent-encoding (`+` as a space in form bodies). */
const decoded = (text: string): ReadonlyArray<string> => {
  const unescaped = text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
  const percent = (value: string) =>
    value.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run)
      } catch {
        return run
      }
    })
  return [text, unescaped, percent(unescaped), percent(unescaped.replace(/\+/g, " "))].map((t) => t.normalize("NFC"))
}

// A name is matched by content only when it is a full name: two words or more and at least five letters. A single
// first name would redact other people's notices.
const isFullName = (name: string): boolean => {
  const words = name.trim().split(/\s+/).filter((w) => w.length > 0)
  return words.length >= 2 && words.join("").length >= 5
}

/** Digits of a phone, and its national part (the last ten) when it carries a country code. */
const phoneDigits = (phone: string): ReadonlyArray<string> => {
  const digits = phone.replace(/\D/g, "")
  if (digits.length < 7) return []
  return digits.length > 10 ? [digits, digits.slice(-10)] : [digits]
}

/**
 * The matcher of `values`: emails (any case), phones (their digits with up to three separators between them, the
 * country code optional) and full names (any case and spacing).
 *
 * @since 0.1.0 @category constructors
 */
export const matcher = (values: Values): Matcher => {
  const emails = [...new Set(values.emails.map((e) => e.trim().toLowerCase()).filter((e) => e.includes("@")))]
  const phones = [...new Set(values.phones.flatMap(phoneDigits))]
  const names = [...new Set(values.names.map((n) => n.trim().toLowerCase().normalize("NFC")).filter(isFullName))]
  const sources = [
    ...emails.map(escapeRegExp),
    ...phones.map((digits) => digits.split("").join("[^0-9a-z]{0,3}")),
    ...names.map((name) => name.split(/\s+/).map(escapeRegExp).join("[\\s+_]+"))
  ]
  const none = sources.length === 0
  const pattern = new RegExp(none ? "(?!)" : sources.map((s) => `(?:${s})`).join("|"), "giu")
  const hit = (text: string) => {
    pattern.lastIndex = 0
    return pattern.test(text)
  }
  const test = (text: string) => !none && decoded(text).some(hit)
  const scrub = (text: string) => {
    if (!test(text)) return text
    const replaced = text.replace(pattern, ERASED)
    return test(replaced) ? ERASED : replaced
  }
  const scrubJson = (value: unknown): { value: unknown; changed: boolean } => {
    if (Predicate.isString(value)) {
      const next = scrub(value)
      return { value: next, changed: next !== value }
    }
    if (Array.isArray(value)) {
      const items = value.map(scrubJson)
      return { value: items.map((i) => i.value), changed: items.some((i) => i.changed) }
    }
    if (Predicate.isRecord(value)) {
      let changed = false
      const out: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(value)) {
        const k = scrub(key)
        const v = scrubJson(item)
        changed = changed || v.changed || k !== key
        out[k] = v.value
      }
      return { value: out, changed }
    }
    return { value, changed: false }
  }
  // PostgreSQL's ARE has no `u` flag and no lookahead; a row with an escape is read in full by `test`.
  const candidate = none ? "$^" : [...sources, "\\\\u[0-9a-f]{4}", "%[0-9a-f]{2}"].map((s) => `(${s})`).join("|")
  return { test, scrub, scrubJson, candidate }
}

/**
 * Adds values to `values`, without repeats and blanks.
 *
 * @since 0.1.0 @category combinators
 */
export const addValues = (values: Values, more: Partial<Values>): Values => {
  const join = (a: ReadonlyArray<string>, b: ReadonlyArray<string> | undefined) =>
    [...new Set([...a, ...(b ?? [])].map((v) => v.trim()).filter((v) => v.length > 0))]
  return { names: join(values.names, more.names), emails: join(values.emails, more.emails), phones: join(values.phones, more.phones) }
}

/**
 * What an erasure did, store by store, in the order the erasers were given.
 *
 * @since 0.1.0 @category models
 */
export interface Report {
  readonly stores: ReadonlyArray<Redaction>
}

/** @since 0.1.0 @category tags */
export class Erasure extends Context.Tag("@service/core/Erasure")<Erasure, {
  /**
   * Redacts the person in every store, in the caller's transaction: first every store's raw forms are collected,
   * then every store redacts with all of them.
   */
  readonly erase: (subject: Subject) => Effect.Effect<Report>
}>() {}

/**
 * The erasure of `erasers`, over the services they need.
 *
 * @since 0.1.0 @category constructors
 */
export const fromErasers = <R>(erasers: ReadonlyArray<Eraser<R>>): Effect.Effect<Context.Tag.Service<Erasure>, never, R> =>
  Effect.map(Effect.context<R>(), (context) =>
    Erasure.of({
      erase: (subject) =>
        Effect.gen(function*() {
          const first = matcher(subject.values)
          let values = subject.values
          for (const eraser of erasers) {
            if (eraser.collect === undefined) continue
            values = addValues(values, yield* eraser.collect(subject, first))
          }
          const full: Subject = { ...subject, values }
          const all = matcher(values)
          const stores: Array<Redaction> = []
          for (const eraser of erasers) stores.push({ store: eraser.store, redacted: yield* eraser.erase(full, all) })
          return { stores }
        }).pipe(Effect.provide(context), Effect.withSpan("Erasure.erase", { captureStackTrace: false }))
    }))

/**
 * @since 0.1.0 @category layers
 */
export const layer = <R>(erasers: ReadonlyArray<Eraser<R>>): Layer.Layer<Erasure, never, R> => Layer.effect(Erasure, fromErasers(erasers))

/**
 * An eraser that scrubs text and JSON columns of a workspace's rows (and its test workspaces') by content: rows whose columns may hold a value
 * (found by `candidate` in SQL) are read in pages and written back scrubbed. For stores whose rows do not name the
 * contact (authored text, saved criteria).
 *
 * @since 0.1.0 @category constructors
 */
export const scrubbing = (options: {
  readonly store: string
  /** `schema.table`. */
  readonly table: string
  /** A text or integer column, unique within a workspace, to page and update by. */
  readonly key: string
  /** The column (or an SQL expression over the row, as a join to its parent) holding the workspace id. */
  readonly workspace: string
  readonly columns: ReadonlyArray<{ readonly name: string; readonly kind: "text" | "jsonb" }>
}): Eraser<SqlClient.SqlClient> =>
  make({
    store: options.store,
    erase: (subject, match) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const any = sql.or(options.columns.map((c) => sql`${sql.literal(`${c.name}::text`)} ~* ${match.candidate}`))
        const Row = Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })
        // The workspace and its test workspaces: making a test workspace copies the Pipelines and Sources people named.
        const inWorkspace = sql`${sql.literal(options.workspace)} IN (SELECT ${subject.workspaceId}::text UNION ALL
          SELECT id FROM core.workspaces WHERE test_of = ${subject.workspaceId})`
        let after: string | null = null
        let redacted = 0
        for (;;) {
          const rows: ReadonlyArray<Record<string, string | null>> = yield* sql`SELECT ${sql.literal(`${options.key}::text AS key_`)}, ${
            sql.literal(options.columns.map((c) => `${c.name}::text AS ${c.name}`).join(", "))
          } FROM ${sql.literal(options.table)}
            WHERE ${inWorkspace} AND (${any})
              ${after === null ? sql`` : sql`AND ${sql.literal(`${options.key}::text`)} > ${after}`}
            ORDER BY ${sql.literal(`${options.key}::text`)} LIMIT 200`.pipe(
            Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))),
            Effect.orDie
          )
          for (const row of rows) {
            const changes: Array<{ name: string; kind: "text" | "jsonb"; value: string }> = []
            for (const column of options.columns) {
              const current = row[column.name]
              if (current === null || current === undefined) continue
              if (column.kind === "text") {
                const next = match.scrub(current)
                if (next !== current) changes.push({ ...column, value: next })
              } else {
                const next = match.scrubJson(JSON.parse(current))
                if (next.changed) changes.push({ ...column, value: JSON.stringify(next.value) })
              }
            }
            if (changes.length === 0) continue
            yield* sql`UPDATE ${sql.literal(options.table)} SET ${
              sql.csv(changes.map((c) => sql`${sql.literal(c.name)} = ${c.value}::${sql.literal(c.kind)}`))
            } WHERE ${sql.literal(`${options.key}::text`)} = ${row["key_"] ?? ""}
              AND ${inWorkspace}`.pipe(Effect.orDie)
            redacted++
          }
          const last = rows[rows.length - 1]
          if (rows.length < 200 || last === undefined) break
          after = last["key_"] ?? null
        }
        return redacted
      })
  })
