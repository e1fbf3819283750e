/**
 * Reference catalogs in the warehouse: SCIAN 2023 (every level), the 32 states with the aliases people type,
 * municipalities with canonical spelling, and the COG/CUCoP partidas. Loaded once from data/mx/catalogs; a
 * second call changes nothing.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { LoadFailed, parseContext } from "./Loader.js"
import { loadCog } from "./internal/cog.js"
import { STATES, stateAliasKeys } from "./States.js"
import { foldWords } from "./Text.js"

/** @since 0.1.0 @category models */
export interface CatalogCounts {
  readonly scian: number
  readonly states: number
  readonly stateAliases: number
  readonly municipalities: number
  readonly cog: number
}

const insertChunked = <A>(
  rows: ReadonlyArray<A>,
  size: number,
  write: (chunk: ReadonlyArray<A>) => Effect.Effect<unknown, SqlError>
) =>
  Effect.forEach(
    Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size)),
    write,
    { discard: true }
  )

/**
 * Loads every catalog table that is still empty.
 *
 * @since 0.1.0 @category loaders
 */
export const ensureLoaded: Effect.Effect<CatalogCounts, LoadFailed, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const countOf = (table: string) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`market.${table}`)}`.pipe(Effect.map((r) => r[0]?.n ?? 0))
  const context = yield* parseContext()

  if ((yield* countOf("states")) === 0) {
    yield* sql`INSERT INTO market.states ${sql.insert(STATES.map((s) => ({ code: s.code, name: s.name })))}`
    yield* insertChunked(stateAliasKeys(), 500, (chunk) =>
      sql`INSERT INTO market.state_aliases ${sql.insert(chunk.map(([alias_key, code]) => ({ alias_key, code })))}
          ON CONFLICT (alias_key) DO NOTHING`)
  }
  if ((yield* countOf("scian")) === 0) {
    const rows = [...context.scian.byCode.values()].map((e) => ({
      code: e.code,
      level: e.level,
      title: e.title,
      parent_code: e.parent
    }))
    yield* insertChunked(rows, 500, (chunk) => sql`INSERT INTO market.scian ${sql.insert(chunk)}`)
  }
  if ((yield* countOf("municipalities")) === 0) {
    const rows = [...context.municipalities.byCode.values()].map((m) => ({
      code: m.code,
      state_code: m.stateCode,
      name: m.name,
      name_folded: foldWords(m.name)
    }))
    yield* insertChunked(rows, 500, (chunk) => sql`INSERT INTO market.municipalities ${sql.insert(chunk)}`)
  }
  if ((yield* countOf("cog")) === 0) {
    const cog = yield* loadCog().pipe(Effect.mapError((error) => new LoadFailed({ file: "cog catalog", reason: error.message })))
    yield* insertChunked(cog, 500, (chunk) => sql`INSERT INTO market.cog ${sql.insert([...chunk])}`)
  }
  return {
    scian: yield* countOf("scian"),
    states: yield* countOf("states"),
    stateAliases: yield* countOf("state_aliases"),
    municipalities: yield* countOf("municipalities"),
    cog: yield* countOf("cog")
  }
}).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Catalogs.ensureLoaded", { captureStackTrace: false }))
