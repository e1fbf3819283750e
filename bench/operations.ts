// Latency of the market-data operations on the generated scale corpus, in-process and over HTTP, each as a ratio
// to the hand-written SQL that returns the same rows, measured interleaved in the same run.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/operations.ts [--scale 1] [--seed 42] [--database <name>] [--iterations 30] [--keep]
//          [--only <text in the operation label>] [--surface in-process|HTTP] [--counts <requests>] [--counts-only]
//
// 1. Unless --database names a database already loaded and published (e.g. one kept by corpus-load.ts --keep),
//    it creates bench_ops_<random>, migrates it and loads the generated corpus through the real load path
//    (Generator.generate → Loader.loadItems), then publishes it.
// 2. It picks inputs from the published data (a state and SCIAN prefix with rows, the RFC with the most awards,
//    RFCs with risk marks, a permit holder), checks once that each operation returns the rows its SQL returns
//    (record fingerprints, in order), then per operation, surface (in-process `run` under withFreshRequest, or
//    HTTP through a listening Server.layer with keep-alive fetch) and concurrency (1, 8) runs `--iterations`
//    measured calls of the operation and as many of its SQL (plain `pg`, same filters, order and LIMIT), after a
//    warm-up, alternating the two in every worker so machine load falls on both alike.
// 3. It prints a markdown table, then page 1 against page 200 of a deep search_suppliers walk (state only).
// 4. Per operation, the statements and commits one HTTP request costs (`--counts` sequential requests, default 200):
//    statements counted through the `pg` driver in this process (the server's connections only, not the baseline's
//    pool), commits as the delta of `pg_stat_database.xact_commit` of the bench database (read on the admin
//    connection, which is another database; every transaction counts, read-only ones too), after waiting 11 s for the
//    write-behind (decision 0080) and the backends' statistics to be flushed; an idle interval measured first is
//    subtracted from both in proportion to the time. `--counts-only` skips the latency tables.
// The database it created is dropped at the end unless --keep is given; a --database is never dropped.
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import { withFreshRequest } from "@service/core/RequestContext"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import { aggregateAwards } from "@service/market-contract/AwardAggregates"
import { getSupplierHistory, searchAwards } from "@service/market-contract/Awards"
import * as Operations from "@service/market-contract/Operations"
import { getOpportunity, searchOpportunities } from "@service/market-contract/Opportunities"
import { searchPermits } from "@service/market-contract/Permits"
import { compareSegmentsOperation } from "@service/market-contract/SupplierSegments"
import { screenRisks, searchRisks } from "@service/market-contract/Risks"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as Generator from "@service/market-warehouse/Generator"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { countPgStatements, dropDatabase, measurePairs } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const scale = Number(option("scale") ?? "1")
const seed = Number(option("seed") ?? "42")
const iterations = Number(option("iterations") ?? "30")
const existing = option("database")
// Only the operations whose label contains this text (e.g. --only get_supplier), and optionally one surface.
const only = option("only")
const surfaces = (option("surface") ?? "in-process,HTTP").split(",")
const keep = args.includes("--keep")
const countRequests = Number(option("counts") ?? "200")
const countsOnly = args.includes("--counts-only")
const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "") {
  console.error("DATABASE_URL is required (the server the benchmark reads, and creates its database on).")
  process.exit(2)
}
if (!(scale > 0) || !Number.isInteger(seed) || !(iterations >= 5) || (existing !== undefined && !/^[a-z0-9_]+$/.test(existing))) {
  console.error("usage: npx tsx bench/operations.ts [--scale 1] [--seed 42] [--database <name>] [--iterations 30] [--keep]")
  process.exit(2)
}
// The benchmark calls far more than the default 600 per minute and 10,000 credits per month; the limiter's and
// the meter's writes still happen on every HTTP call.
process.env["SERVICE_RATE_LIMIT_PER_MINUTE"] = "100000000"
process.env["SERVICE_MONTHLY_INSIGHT_CREDITS"] = "100000000"
// No embedded worker: its idle polls would be counted as the requests' statements and commits (market reads enqueue
// no work for it).
process.env["SERVICE_EMBEDDED_WORKER"] = "false"

// Statements the server sends: every query through the `pg` driver, minus those of the benchmark's own clients.
const driver = countPgStatements()

const database = existing ?? `bench_ops_${randomBytes(4).toString("hex")}`
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
const KEY = `svc_key_bench_${randomBytes(16).toString("hex")}`
const warmup = 5
// The supplier words as their index holds them, with the state folded in (market migration 0009, decision 0087):
// hand-written SQL that wants the index writes the same expression.
const supplierWords = "(o.search_tsv || array_to_tsvector(array_remove(ARRAY['state ' || o.state_code], NULL)))"
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

// ---------------------------------------------------------------------------
// Load (as corpus-load.ts, without its baseline)

const load = async () => {
  const services = Layer.mergeAll(Corpus.layer, crypto).pipe(
    Layer.provideMerge(Database.layerPgWith({ url: Redacted.make(benchUrl) }))
  )
  const program = Effect.gen(function*() {
    yield* Migrations.run(App.migrations)
    const profile = yield* Generator.deriveProfile
    const corpus = yield* Corpus.Corpus
    const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
    const started = performance.now()
    let last = 0
    yield* Generator.generate({
      scale,
      seed,
      snapshotId,
      profile,
      onProgress: ({ kind, rows, total }) =>
        Effect.sync(() => {
          if (rows - last >= 100_000 || rows === total || rows < last) {
            last = rows === total ? 0 : rows
            process.stderr.write(`  ${kind}: ${fmt(rows)} / ${fmt(total)} (${fmt((performance.now() - started) / 1000)} s)\n`)
          }
        })
    })
    const publishing = performance.now()
    yield* corpus.publish(snapshotId)
    console.log(`loaded in ${fmt((publishing - started) / 1000, 1)} s, published in ${fmt((performance.now() - publishing) / 1000, 1)} s`)
  })
  await Effect.runPromise(program.pipe(Effect.provide(services), quiet))
}

// ---------------------------------------------------------------------------
// Measurement

type Row = Record<string, unknown>

interface Case {
  readonly operation: string
  readonly inProcess: () => Promise<unknown>
  readonly http: () => Promise<string>
  readonly sql: () => Promise<ReadonlyArray<Row>>
  /** Whether the fingerprints of the answer must come in the SQL's order (screen_risks regroups by request). */
  readonly ordered: boolean
}

/**
 * `concurrency` workers share `iterations` measured pairs (after `warmup` unmeasured pairs per worker); each
 * worker alternates which of the two goes first.
 */
const measure = (op: () => Promise<unknown>, sql: () => Promise<unknown>, concurrency: number) =>
  measurePairs(op, sql, { concurrency, iterations, warmup })

/** Every `record_fingerprint` under `results`, in document order. */
const fingerprintsOf = (value: unknown): Array<string> => {
  const out: Array<string> = []
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x)
    } else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === "record_fingerprint" && typeof x === "string") out.push(x)
        else walk(x)
      }
    }
  }
  if (typeof value === "object" && value !== null && "results" in value) walk(value.results)
  return out
}

/** The same rows: the answer's fingerprints are the SQL's (without the extra row read to know there is more). */
const check = async (c: Case) => {
  const body: unknown = JSON.parse(await c.http())
  const rows = await c.sql()
  const fromSql = rows.flatMap((r) => (typeof r["fingerprint"] === "string" ? [r["fingerprint"]] : []))
  const fromOp = fingerprintsOf(body)
  // compare_segments: every cell's counts are the SQL's for its state and segment.
  const field = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
    path.reduce<unknown>((v, key) => (typeof v === "object" && v !== null && key in v ? Reflect.get(v, key) : undefined), value)
  const cells: unknown = field(body, "results", "cells")
  if (Array.isArray(cells)) {
    for (const cell of cells as ReadonlyArray<unknown>) {
      const state = String(field(cell, "state", "code"))
      const index = Number(String(field(cell, "segment_id")).slice(1))
      const row = rows.find((r) => r["state_code"] === state)
      if (Number(row?.[`n${index}`] ?? 0) !== field(cell, "count") || Number(row?.[`c${index}`] ?? 0) !== field(cell, "with_contact_channel")) {
        throw new Error(`${c.operation}: cell ${JSON.stringify(cell)} is not the SQL's ${JSON.stringify(row)}`)
      }
    }
    return cells.length
  }
  // Answers without records (counts, aggregate groups): as many groups as the SQL, or the same count.
  if (fromSql.length === 0 && typeof body === "object" && body !== null && "results" in body) {
    const results = body.results
    const size = Array.isArray(results) ? results.length : undefined
    const count = typeof results === "object" && results !== null && "count" in results ? results.count : undefined
    const sqlCount = rows[0]?.["n"]
    if (size !== undefined && size !== rows.length) throw new Error(`${c.operation}: ${size} groups, the SQL ${rows.length}`)
    if (count !== undefined && count !== sqlCount) throw new Error(`${c.operation}: count ${String(count)}, the SQL ${String(sqlCount)}`)
    return size ?? (count === undefined ? 0 : 1)
  }
  const expected = fromSql.slice(0, fromOp.length)
  const same = c.ordered ? expected.join() === fromOp.join() : [...expected].sort().join() === [...fromOp].sort().join()
  if (!same || (fromSql.length > 0 && fromOp.length === 0) || fromSql.length - fromOp.length > 1) {
    throw new Error(`${c.operation}: the operation returned ${fromOp.length} rows, the SQL ${fromSql.length}, not the same`)
  }
  return fromOp.length
}

// ---------------------------------------------------------------------------
// Run

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  driver.exclude(admin)
  await admin.connect()
  if (existing === undefined) {
    await admin.query(`CREATE DATABASE ${database}`)
    console.log(`database ${database}; loading the generated corpus at scale ${scale}, seed ${seed}`)
  } else {
    console.log(`database ${database} (already loaded)`)
  }
  const pool = new pg.Pool({ connectionString: benchUrl, max: 8 })
  pool.on("connect", (client) => driver.exclude(client))
  let dispose: () => Promise<void> = () => Promise.resolve()
  try {
    if (existing === undefined) await load()
    const services = App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto)
    const rt = ManagedRuntime.make(
      Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(Layer.provideMerge(services), Layer.orDie)
    )
    dispose = () => rt.dispose()
    const address = await rt.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    await rt.runPromise(ensureDemo(Option.some(Redacted.make(KEY))).pipe(quiet))
    const base = `http://127.0.0.1:${address.port}/api/v1/workspaces/demo/market-data`

    // Node's fetch (undici) keeps connections alive: up to 8 in flight, so up to 8 sockets reused throughout.
    const http = (method: "GET" | "POST", path: string, body?: unknown) => async () => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { "x-api-key": KEY, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
      return text
    }
    const local = <A, E>(effect: Effect.Effect<A, E, Operations.Requirements>) => () => rt.runPromise(effect.pipe(withFreshRequest("http")))
    const query = (text: string, values: ReadonlyArray<unknown>) => async () => (await pool.query<Row>(text, [...values])).rows
    const one = async (text: string, values: ReadonlyArray<unknown> = []): Promise<Row> => {
      const row = (await pool.query<Row>(text, [...values])).rows[0]
      if (row === undefined) throw new Error(`no row for: ${text}`)
      return row
    }
    const str = (row: Row, key: string): string => {
      const v = row[key]
      if (typeof v !== "string") throw new Error(`expected text in ${key}`)
      return v
    }

    // Inputs from the published data.
    const snapshot = str(await one(`SELECT id::text AS id FROM market.snapshots WHERE status = 'active'`), "id")
    const visible = `IN (SELECT slug FROM market.sources WHERE licensed_for_display)`
    // A state and 3-digit SCIAN prefix holding about 2,000 observations (a typical narrowed search).
    const segment = await one(
      `SELECT state_code, left(scian_code, 3) AS scian, count(*)::int AS n FROM market.supplier_observations
       WHERE snapshot_id = $1 AND scian_code IS NOT NULL AND state_code IS NOT NULL GROUP BY 1, 2
       ORDER BY abs(count(*) - 2000), 1, 2 LIMIT 1`,
      [snapshot]
    )
    const state = str(segment, "state_code")
    const scian = str(segment, "scian")
    // The longest word of the name of one observation of that state: a text query that has matches.
    const named = await one(`SELECT name FROM market.supplier_observations WHERE snapshot_id = $1 AND state_code = $2 ORDER BY id LIMIT 1`, [snapshot, state])
    const word = str(named, "name").split(/\s+/).sort((a, b) => b.length - a.length)[0] ?? ""
    // The RFC with the most awards: the slowest history and award search there is.
    const top = await one(
      `SELECT supplier_rfc, count(*)::int AS n FROM market.awards WHERE snapshot_id = $1 AND supplier_rfc IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`,
      [snapshot]
    )
    const awardRfc = str(top, "supplier_rfc")
    const years = await one(
      `SELECT max(extract(year FROM award_date))::int AS y FROM market.awards WHERE snapshot_id = $1`,
      [snapshot]
    )
    const lastYear = Number(years["y"])
    const riskRfcs = (await pool.query<{ subject_rfc: string }>(
      `SELECT subject_rfc FROM market.risk_marks WHERE snapshot_id = $1 AND subject_rfc IS NOT NULL
       GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 10`,
      [snapshot]
    )).rows.map((r) => r.subject_rfc)
    const cleanRfcs = (await pool.query<{ supplier_rfc: string }>(
      `SELECT DISTINCT supplier_rfc FROM market.awards a WHERE snapshot_id = $1 AND supplier_rfc IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM market.risk_marks r WHERE r.snapshot_id = a.snapshot_id AND r.subject_rfc = a.supplier_rfc)
       ORDER BY 1 LIMIT 10`,
      [snapshot]
    )).rows.map((r) => r.supplier_rfc)
    const screenBatch = [...riskRfcs, ...cleanRfcs].slice(0, 20)
    const riskRfc = riskRfcs[0] ?? awardRfc
    const holder = str(await one(`SELECT holder_name FROM market.permits WHERE snapshot_id = $1 ORDER BY id LIMIT 1`, [snapshot]), "holder_name")
    const holderKey = str(await one(`SELECT holder_name_norm FROM market.permits WHERE snapshot_id = $1 ORDER BY id LIMIT 1`, [snapshot]), "holder_name_norm")
    // The longest word of an opportunity title in a state with opportunities, and the procedure with the most awards.
    const opportunityState = str(await one(
      `SELECT state_code FROM market.opportunities WHERE snapshot_id = $1 AND state_code IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
      [snapshot]
    ), "state_code")
    const opportunityTitle = str(await one(
      `SELECT title FROM market.opportunities WHERE snapshot_id = $1 AND state_code = $2 ORDER BY id LIMIT 1`,
      [snapshot, opportunityState]
    ), "title")
    const opportunityWord = opportunityTitle.split(/\s+/).sort((a, b) => b.length - a.length)[0] ?? ""
    const busiestProcedure = await one(
      `SELECT id::text AS id, fingerprint, award_count, buyer_name, published_on::text AS published_on FROM market.opportunities
       WHERE snapshot_id = $1 AND buyer_name IS NOT NULL AND published_on IS NOT NULL ORDER BY award_count DESC, id LIMIT 1`,
      [snapshot]
    )
    console.log(
      `inputs: opportunity word "${opportunityWord}" in state ${opportunityState}, procedure with ${String(busiestProcedure["award_count"])} awards; state ${state}, SCIAN ${scian} (${String(segment["n"])} rows), word "${word}", award RFC ${awardRfc} (${String(top["n"])} awards), ` +
        `years ${lastYear - 1}-${lastYear} vs ${lastYear - 3}-${lastYear - 2}, risk RFC ${riskRfc}, screen batch ${screenBatch.length}, holder "${holder}"`
    )

    const limit = 20
    const supplierCols = `o.id::text AS id, o.snapshot_id, o.fingerprint, o.name, o.legal_name, o.name_norm, o.rfc,
      o.scian_code, o.scian_title, o.state_code, o.municipality_code, o.municipality_name, o.employment_band,
      o.establishment_type, o.incorporated_on, o.has_phone, o.has_email, o.has_website,
      rs.mark_count, rs.kinds, rs.any_active, rs.has_exoneration`
    const awardCols = `a.id::text AS id, a.fingerprint, a.title, a.supplier_rfc, a.supplier_name, a.supplier_size, a.buyer_name,
      a.buyer_acronym, a.procedure_type, a.contracting_type, a.award_date::text AS award_date, a.amount::text AS amount,
      a.currency, a.amount_scope, a.cog_partidas, a.state_code, rs.mark_count, rs.kinds, rs.any_active, rs.has_exoneration`
    const riskCols = `r.id::text AS id, r.fingerprint, r.kind, r.legal_basis, r.subject_rfc, r.subject_name, r.status, r.status_text,
      r.listed_on::text AS listed_on, r.stage_dates::text AS stage_dates, r.sanctioning_body, r.sanction_type, r.period,
      r.fine_amount::text AS fine_amount, r.fine_currency`
    const supplierFrom = `FROM market.supplier_observations o
      LEFT JOIN market.risk_summaries rs ON rs.snapshot_id = o.snapshot_id AND rs.rfc = o.rfc
      WHERE o.snapshot_id = $1 AND o.source_slug ${visible}`
    const awardsOfRfc = `FROM market.awards a
      LEFT JOIN market.risk_summaries rs ON rs.snapshot_id = a.snapshot_id AND rs.rfc = a.supplier_rfc
      WHERE a.snapshot_id = $1 AND a.source_slug ${visible} AND a.supplier_rfc = $2`

    const segmentInput = { state, scian_codes: [scian] }
    const segmentSql = `${supplierFrom} AND o.state_code = $2 AND o.scian_code LIKE $3`
    const firstRef = await local(Operations.searchSuppliers.run({ ...segmentInput, limit: 1 }))()
    const ref = firstRef.results[0]?.record_ref
    const refId = firstRef.results[0]?.record_fingerprint
    if (ref === undefined || refId === undefined) throw new Error("no supplier to get")
    const refRowId = str(await one(`SELECT id::text AS id FROM market.supplier_observations WHERE snapshot_id = $1 AND fingerprint = $2`, [snapshot, refId]), "id")

    const period = { from_date: `${lastYear - 1}-01-01`, to_date: `${lastYear}-12-31` }
    const compare = { from_date: `${lastYear - 3}-01-01`, to_date: `${lastYear - 2}-12-31` }
    const aggregateBase = { currency: "MXN", amount_scope: "supplier_contract", group_by: ["award_year"], ...period } as const
    const inB = `a.award_date >= $2::date AND a.award_date <= $3::date`
    const inA = `a.award_date >= $4::date AND a.award_date <= $5::date`
    const aggregateWhere = `FROM market.awards a WHERE a.snapshot_id = $1 AND a.source_slug ${visible}
      AND a.currency = 'MXN' AND a.amount_scope = 'supplier_contract'`

    // compare_segments: two segments (words of the supplier names) by three states.
    const segmentWords = [word, "comercializadora"]
    const segmentStates = [state, opportunityState, "09"].filter((v, i, all) => all.indexOf(v) === i)
    const segmentsInput = {
      segments: segmentWords.map((w, i) => ({ id: `s${i}`, query: w })),
      geographies: segmentStates.map((code, i) => ({ id: `g${i}`, state: code })),
      observed_kind: "supplier_observation" as const,
      contact_breakdown: true
    }
    const opportunityRef = await local(searchOpportunities.run({ query: opportunityWord, state: opportunityState, limit: 1 }))()
    // Its record_ref, as a caller gets it: from a search by its buyer and publication date.
    const day = str(busiestProcedure, "published_on")
    const sameDay = await local(searchOpportunities.run({ buyer: str(busiestProcedure, "buyer_name"), published_from: day, published_to: day, limit: 50 }))()
    const procedureRef = sameDay.results.find((row) => row.record_fingerprint === str(busiestProcedure, "fingerprint"))?.record_ref ?? ""
    if (opportunityRef.results.length === 0 || procedureRef === "") throw new Error("no opportunity to get")
    const opportunityCols = `o.id::text AS id, o.snapshot_id, o.fingerprint, o.title, o.description, o.buyer_name,
      o.buyer_acronym, o.procedure_type, o.contracting_type, o.status_text, o.is_open, o.actionability,
      o.actionability_reason, o.published_on::text AS published_on, o.state_code, o.cog_partidas, o.amount::text AS amount,
      o.currency, o.award_count`

    const cases: ReadonlyArray<Case> = [
      {
        operation: "search_suppliers (state + SCIAN)",
        inProcess: local(Operations.searchSuppliers.run({ ...segmentInput, limit })),
        http: http("POST", "/suppliers/search", { ...segmentInput, limit }),
        sql: query(`SELECT ${supplierCols} ${segmentSql} ORDER BY o.name_norm, o.id LIMIT ${limit + 1}`, [snapshot, state, `${scian}%`]),
        ordered: true
      },
      {
        operation: "search_suppliers (text + state)",
        inProcess: local(Operations.searchSuppliers.run({ query: word, state, limit })),
        http: http("POST", "/suppliers/search", { query: word, state, limit }),
        sql: query(
          `SELECT ${supplierCols}, ts_rank_cd(o.search_tsv, plainto_tsquery('market.es', $3))::float8 AS rank
           ${supplierFrom} AND ${supplierWords} @@ (plainto_tsquery('market.es', $3) && quote_literal('state ' || $2)::tsquery)
           ORDER BY rank DESC, o.id LIMIT ${limit + 1}`,
          [snapshot, state, word]
        ),
        ordered: true
      },
      {
        operation: "get_supplier",
        inProcess: local(Operations.getSupplier.run({ record_ref: ref })),
        http: http("GET", `/suppliers/~ref/${encodeURIComponent(ref)}`),
        sql: query(`SELECT ${supplierCols} ${supplierFrom} AND o.id = $2::bigint`, [snapshot, refRowId]),
        ordered: true
      },
      {
        operation: "count_suppliers (state + SCIAN)",
        inProcess: local(Operations.countSuppliers.run(segmentInput)),
        http: http("POST", "/suppliers/count", segmentInput),
        sql: query(`SELECT count(*)::int AS n ${segmentSql}`, [snapshot, state, `${scian}%`]),
        ordered: true
      },
      {
        operation: "search_awards (supplier_rfc)",
        inProcess: local(searchAwards.run({ supplier_rfc: awardRfc, limit })),
        http: http("POST", "/awards/search", { supplier_rfc: awardRfc, limit }),
        sql: query(
          `SELECT ${awardCols} ${awardsOfRfc} ORDER BY coalesce(a.award_date, DATE '0001-01-01') DESC, a.id LIMIT ${limit + 1}`,
          [snapshot, awardRfc]
        ),
        ordered: true
      },
      {
        operation: "get_supplier_history",
        inProcess: local(getSupplierHistory.run({ supplier_rfc: awardRfc, currency: "MXN", amount_scope: "supplier_contract", limit })),
        http: http("POST", "/awards/history", { supplier_rfc: awardRfc, currency: "MXN", amount_scope: "supplier_contract", limit }),
        // The two statements the answer needs: totals per (currency, scope), then the page.
        sql: async () => {
          await pool.query(
            `SELECT a.currency, a.amount_scope, count(*)::int AS n, coalesce(sum(a.amount), 0)::text AS total
             FROM market.awards a WHERE a.snapshot_id = $1 AND a.source_slug ${visible} AND a.supplier_rfc = $2
             GROUP BY 1, 2 ORDER BY 1 NULLS LAST, 2`,
            [snapshot, awardRfc]
          )
          return (await pool.query<Row>(
            `SELECT ${awardCols} ${awardsOfRfc} AND a.currency = 'MXN' AND a.amount_scope = 'supplier_contract'
             ORDER BY coalesce(a.award_date, DATE '0001-01-01') DESC, a.id LIMIT ${limit + 1}`,
            [snapshot, awardRfc]
          )).rows
        },
        ordered: true
      },
      {
        operation: "aggregate_awards (award_year)",
        inProcess: local(aggregateAwards.run(aggregateBase)),
        http: http("POST", "/awards/aggregate", aggregateBase),
        sql: query(
          `SELECT extract(year FROM a.award_date)::int AS y, count(*)::int AS n, coalesce(sum(a.amount), 0)::text AS total
           ${aggregateWhere} AND ${inB} GROUP BY 1 ORDER BY sum(a.amount) DESC NULLS LAST, 1 LIMIT 51`,
          [snapshot, period.from_date, period.to_date]
        ),
        ordered: true
      },
      {
        operation: "aggregate_awards (award_year, compare_period)",
        inProcess: local(aggregateAwards.run({ ...aggregateBase, compare_period: compare })),
        http: http("POST", "/awards/aggregate", { ...aggregateBase, compare_period: compare }),
        sql: query(
          `SELECT y, b_count, b_total::text, a_count, a_total::text, (b_total - a_total)::text AS delta FROM (
             SELECT extract(year FROM a.award_date)::int AS y,
               count(*) FILTER (WHERE ${inB})::int AS b_count, coalesce(sum(a.amount) FILTER (WHERE ${inB}), 0) AS b_total,
               count(*) FILTER (WHERE ${inA})::int AS a_count, coalesce(sum(a.amount) FILTER (WHERE ${inA}), 0) AS a_total
             ${aggregateWhere} AND ((${inB}) OR (${inA})) GROUP BY 1) g
           ORDER BY b_total DESC, y LIMIT 51`,
          [snapshot, period.from_date, period.to_date, compare.from_date, compare.to_date]
        ),
        ordered: true
      },
      {
        operation: "search_risks (rfc)",
        inProcess: local(searchRisks.run({ rfc: riskRfc, limit })),
        http: http("POST", "/risks/search", { rfc: riskRfc, limit }),
        sql: query(
          `SELECT ${riskCols} FROM market.risk_marks r WHERE r.snapshot_id = $1 AND r.source_slug ${visible} AND r.subject_rfc = $2
           ORDER BY coalesce(r.listed_on, DATE '0001-01-01') DESC, r.id LIMIT ${limit + 1}`,
          [snapshot, riskRfc]
        ),
        ordered: true
      },
      {
        operation: `screen_risks (${screenBatch.length} RFCs)`,
        inProcess: local(screenRisks.run({ rfcs: screenBatch })),
        http: http("POST", "/risks/screen", { rfcs: screenBatch }),
        sql: query(
          `SELECT ${riskCols} FROM market.risk_marks r WHERE r.snapshot_id = $1 AND r.source_slug ${visible}
           AND r.subject_rfc = ANY($2::text[]) ORDER BY r.subject_rfc, r.listed_on DESC NULLS LAST, r.id`,
          [snapshot, screenBatch]
        ),
        ordered: false
      },
      {
        operation: "search_permits (holder_name)",
        inProcess: local(searchPermits.run({ holder_name: holder, limit })),
        http: http("POST", "/permits/search", { holder_name: holder, limit }),
        sql: query(
          `SELECT o.id::text AS id, o.fingerprint, o.permit_number, o.holder_name, o.holder_rfc, o.plant_name, o.permit_type,
             o.status_text, o.is_active_risk, o.is_expansion, o.investment_mdd::text, o.capacity_mw::text, o.estimated_generation::text,
             o.fuel, o.technology, o.state_code, o.granted_on::text, rs.mark_count, rs.kinds, rs.any_active, rs.has_exoneration,
             similarity($2, o.holder_name_norm)::float8 AS sim
           FROM market.permits o LEFT JOIN market.risk_summaries rs ON rs.snapshot_id = o.snapshot_id AND rs.rfc = o.holder_rfc
           WHERE o.snapshot_id = $1 AND o.source_slug ${visible} AND $2 <% o.holder_name_norm
             AND word_similarity($2, o.holder_name_norm) >= 0.6
           ORDER BY sim DESC, o.id LIMIT ${limit + 1}`,
          [snapshot, holderKey]
        ),
        ordered: true
      },
      {
        operation: `compare_segments (${segmentWords.length} segments x ${segmentStates.length} states)`,
        inProcess: local(compareSegmentsOperation.run(segmentsInput)),
        http: http("POST", "/suppliers/compare-segments", segmentsInput),
        sql: query(
          `SELECT o.state_code, ${segmentWords.map((_, i) => `count(*) FILTER (WHERE o.search_tsv @@ plainto_tsquery('market.es', $${i + 3}))::int AS n${i},
             count(*) FILTER (WHERE o.search_tsv @@ plainto_tsquery('market.es', $${i + 3}) AND (o.has_phone OR o.has_email OR o.has_website))::int AS c${i}`).join(", ")}
           FROM market.supplier_observations o WHERE o.snapshot_id = $1 AND o.source_slug ${visible} AND o.state_code = ANY($2::text[])
             AND (${segmentWords.map((_, i) => `${supplierWords} @@ plainto_tsquery('market.es', $${i + 3})`).join(" OR ")})
           GROUP BY o.state_code`,
          [snapshot, segmentStates, ...segmentWords]
        ),
        ordered: true
      },
      {
        operation: "search_opportunities (text + state)",
        inProcess: local(searchOpportunities.run({ query: opportunityWord, state: opportunityState, limit })),
        http: http("POST", "/opportunities/search", { query: opportunityWord, state: opportunityState, limit }),
        sql: query(
          `SELECT ${opportunityCols}, ts_rank_cd(o.search_tsv, plainto_tsquery('market.es', $3))::float8 AS rank
           FROM market.opportunities o WHERE o.snapshot_id = $1 AND o.source_slug ${visible} AND o.state_code = $2
             AND o.search_tsv @@ plainto_tsquery('market.es', $3)
           ORDER BY rank DESC, o.id LIMIT ${limit + 1}`,
          [snapshot, opportunityState, opportunityWord]
        ),
        ordered: true
      },
      {
        operation: `get_opportunity (${String(busiestProcedure["award_count"])} nested awards)`,
        inProcess: local(getOpportunity.run({ record_ref: procedureRef, include_awards: true })),
        http: http("GET", `/opportunities/~ref/${encodeURIComponent(procedureRef)}?include_awards=true`),
        // The two statements the answer needs: the procedure, then its awards.
        sql: async () => {
          const procedure = (await pool.query<Row>(
            `SELECT ${opportunityCols} FROM market.opportunities o WHERE o.snapshot_id = $1 AND o.source_slug ${visible} AND o.id = $2::bigint`,
            [snapshot, str(busiestProcedure, "id")]
          )).rows
          const awards = (await pool.query<Row>(
            `SELECT a.id::text AS id, a.fingerprint, a.supplier_rfc, a.supplier_name, a.award_date::text AS award_date,
               a.amount::text AS amount, a.currency, a.amount_scope, a.cog_partidas, rs.mark_count, rs.kinds, rs.any_active, rs.has_exoneration
             FROM market.awards a LEFT JOIN market.risk_summaries rs ON rs.snapshot_id = a.snapshot_id AND rs.rfc = a.supplier_rfc
             JOIN market.opportunities p ON p.snapshot_id = a.snapshot_id AND p.source_slug = a.source_slug
               AND p.source_record_id = a.opportunity_source_record_id
             WHERE p.id = $2::bigint AND a.snapshot_id = $1 AND a.source_slug ${visible}
             ORDER BY a.award_date ASC NULLS LAST, a.id ASC LIMIT 201`,
            [snapshot, str(busiestProcedure, "id")]
          )).rows
          return [...procedure, ...awards]
        },
        ordered: true
      },
      {
        operation: "market_capabilities",
        inProcess: local(Operations.marketCapabilities.run({})),
        http: http("GET", "/capabilities"),
        // What an answer must read once the facet lists are cached: the active publication and its coverage.
        sql: async () => {
          await pool.query(`SELECT id, status, published_at FROM market.snapshots WHERE status = 'active'`)
          return (await pool.query<Row>(`SELECT * FROM market.coverage WHERE snapshot_id = $1`, [snapshot])).rows
        },
        ordered: true
      }
    ]

    const selected = cases.filter((c) => only === undefined || c.operation.includes(only))
    for (const c of selected) {
      const rows = await check(c)
      process.stderr.write(`  checked ${c.operation}: ${rows} rows or groups, the same as the SQL's\n`)
    }

    // Statements and commits per HTTP request, each over an idle interval of the same length.
    const commits = async () =>
      Number((await admin.query<{ n: string }>(`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1`, [database])).rows[0]?.n)
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    // Longer than the write-behind intervals (100 and 200 ms) and than an idle backend may hold its statistics (a
    // backend that flushed less than 1 s ago waits 10 s before flushing again).
    const drain = 11_000
    await pause(drain)
    const window = async (run: () => Promise<unknown>, n: number) => {
      const c0 = await commits()
      const s0 = driver.count()
      const started = performance.now()
      for (let i = 0; i < n; i++) await run()
      await pause(drain)
      return { statements: driver.count() - s0, commits: (await commits()) - c0, ms: performance.now() - started }
    }
    const countLines: Array<string> = []
    if (countRequests > 0) {
      const idle = await window(() => Promise.resolve(), 1)
      for (const c of selected) {
        const busy = await window(c.http, countRequests)
        // The idle interval's background scaled to this one's length.
        const scaled = (x: number) => x * (busy.ms / idle.ms)
        const line = `| ${c.operation} | ${countRequests} | ${fmt((busy.statements - scaled(idle.statements)) / countRequests, 2)} | ` +
          `${fmt((busy.commits - scaled(idle.commits)) / countRequests, 2)} |`
        countLines.push(line)
        process.stderr.write(`${line}\n`)
      }
      countLines.push(`(idle background over ${fmt(idle.ms)} ms: ${idle.statements} statements, ${idle.commits} commits, subtracted in proportion)`)
    }

    const lines: Array<string> = []
    const failures = new Set<string>()
    const ms = (n: number) => fmt(n, 1)
    const started = performance.now()
    for (const c of countsOnly ? [] : selected) {
      for (const surface of (["in-process", "HTTP"] as const).filter((name) => surfaces.includes(name))) {
        for (const concurrency of [1, 8]) {
          const r = await measure(surface === "HTTP" ? c.http : c.inProcess, c.sql, concurrency)
          const line = `| ${c.operation} | ${surface} | ${concurrency} | ${ms(r.op.p50)} / ${ms(r.op.p95)} / ${ms(r.op.p99)} | ` +
            `${ms(r.sql.p50)} / ${ms(r.sql.p95)} / ${ms(r.sql.p99)} | ${fmt(r.op.p95 / r.sql.p95, 2)}x | ` +
            `${fmt(concurrency * 1000 / r.op.mean)} / ${fmt(concurrency * 1000 / r.sql.mean)} | ` +
            `${r.opFailures.count} / ${r.sqlFailures.count} |`
          lines.push(line)
          for (const f of [r.opFailures.first, r.sqlFailures.first]) if (f !== undefined) failures.add(`${c.operation}: ${f}`)
          process.stderr.write(`${line}  (${fmt((performance.now() - started) / 1000)} s)\n`)
        }
      }
    }

    const printCounts = () => {
      console.log()
      console.log("Statements and commits per HTTP request (sequential requests; commits are every transaction of the bench database):")
      console.log()
      console.log("| operation | requests | statements per request | commits per request |")
      console.log("| - | -: | -: | -: |")
      for (const line of countLines) console.log(line)
    }
    if (countsOnly) {
      printCounts()
      return
    }

    // Deep walk: search_suppliers by the largest state only, page 1 against page 200 (cursor kept from one walk).
    const biggest = await one(
      `SELECT state_code, count(*)::int AS n FROM market.supplier_observations WHERE snapshot_id = $1 AND state_code IS NOT NULL
       GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`,
      [snapshot]
    )
    const walkState = str(biggest, "state_code")
    const deepPage = Math.min(200, Math.floor(Number(biggest["n"]) / limit))
    const walkInput = { state: walkState, limit }
    let cursor: string | undefined
    for (let page = 1; page < deepPage; page++) {
      const answer = await local(Operations.searchSuppliers.run(cursor === undefined ? walkInput : { ...walkInput, cursor }))()
      const next = answer.page?.nextCursor ?? undefined
      if (next === undefined || next === null) throw new Error(`the walk ended at page ${page}`)
      cursor = next
    }
    const deepCursor = cursor
    if (deepCursor === undefined) throw new Error("no cursor")
    const walkSql = `SELECT ${supplierCols} ${supplierFrom} AND o.state_code = $2`
    let position: { name: string; id: string } | undefined
    for (let page = 1; page < deepPage; page++) {
      const rows = (await pool.query<{ name_norm: string; id: string }>(
        position === undefined
          ? `${walkSql} ORDER BY o.name_norm, o.id LIMIT ${limit}`
          : `${walkSql} AND (o.name_norm, o.id) > ($3, $4::bigint) ORDER BY o.name_norm, o.id LIMIT ${limit}`,
        position === undefined ? [snapshot, walkState] : [snapshot, walkState, position.name, position.id]
      )).rows
      const last = rows[rows.length - 1]
      if (last === undefined) throw new Error("the SQL walk ended early")
      position = { name: last.name_norm, id: last.id }
    }
    const deepPosition = position
    if (deepPosition === undefined) throw new Error("no position")
    const page1Sql = query(`${walkSql} ORDER BY o.name_norm, o.id LIMIT ${limit + 1}`, [snapshot, walkState])
    const page200Sql = query(
      `${walkSql} AND (o.name_norm, o.id) > ($3, $4::bigint) ORDER BY o.name_norm, o.id LIMIT ${limit + 1}`,
      [snapshot, walkState, deepPosition.name, deepPosition.id]
    )
    const deep: Array<string> = []
    for (const surface of ["in-process", "HTTP"] as const) {
      const page1 = await measure(
        surface === "HTTP" ? http("POST", "/suppliers/search", walkInput) : local(Operations.searchSuppliers.run(walkInput)),
        page1Sql,
        1
      )
      const page200 = await measure(
        surface === "HTTP"
          ? http("POST", "/suppliers/search", { ...walkInput, cursor: deepCursor })
          : local(Operations.searchSuppliers.run({ ...walkInput, cursor: deepCursor })),
        page200Sql,
        1
      )
      deep.push(
        `| ${surface} | ${ms(page1.op.p95)} | ${ms(page200.op.p95)} | ${fmt(page200.op.p95 / page1.op.p95, 2)}x | ` +
          `${ms(page1.sql.p95)} | ${ms(page200.sql.p95)} |`
      )
    }

    // The transport's floor: an unauthenticated probe on the same server and connections (no auth, limiter or meter).
    const health = async () => {
      const response = await fetch(`http://127.0.0.1:${address.port}/health`)
      await response.text()
    }
    const floor: Array<string> = []
    for (const concurrency of [1, 8]) {
      const r = await measure(health, query("SELECT 1", []), concurrency)
      floor.push(`GET /health at concurrency ${concurrency}: p50 ${ms(r.op.p50)} / p95 ${ms(r.op.p95)} ms (SELECT 1: p95 ${ms(r.sql.p95)} ms)`)
    }

    console.log()
    console.log(`${iterations} measured calls of each side per cell after ${warmup} warm-up pairs per worker; ms; requests/s = concurrency / mean latency.`)
    console.log()
    console.log("| operation | surface | concurrency | p50 / p95 / p99 ms | SQL p50 / p95 / p99 ms | p95 vs SQL p95 | requests/s (op / SQL) | failed (op / SQL) |")
    console.log("| - | - | -: | -: | -: | -: | -: | -: |")
    for (const line of lines) console.log(line)
    for (const failure of failures) console.log(`failure: ${failure}`)
    console.log()
    console.log(`Deep walk, search_suppliers state ${walkState} only (${String(biggest["n"])} rows), limit ${limit}, concurrency 1, page 1 against page ${deepPage}:`)
    console.log()
    console.log(`| surface | page 1 p95 ms | page ${deepPage} p95 ms | deep vs page 1 | SQL page 1 p95 ms | SQL page ${deepPage} p95 ms |`)
    console.log("| - | -: | -: | -: | -: | -: |")
    for (const line of deep) console.log(line)
    console.log()
    for (const line of floor) console.log(line)
    if (countLines.length > 0) printCounts()
  } finally {
    await dispose()
    await pool.end()
    if (keep || existing !== undefined) {
      console.log(`kept database ${database}`)
    } else {
      await dropDatabase(admin, database)
    }
    await admin.end()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
