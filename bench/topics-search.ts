// Latency of topic search over 100,000 generated topics (issue 9: p95 under 30 ms on PostgreSQL), in-process
// (`Topics.search`) and over HTTP (`GET /topics/search`, the topics_search operation), each as a ratio to the
// hand-written SQL that returns the same rows, measured interleaved in the same run.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/topics-search.ts [--topics 100000] [--others 10000] [--iterations 200] [--max-seconds 12]
//          [--surface in-process,HTTP] [--only <text in the query label>] [--keep]
//
// 1. It creates bench_topics_<random>, migrates it and starts the application (App.layer under Server.layer on a
//    free port), creates a workspace with Accounts.createWorkspace and an API key for it, and two other
//    workspaces, then generates the topics in bulk with SQL (INSERT … SELECT … FROM generate_series): titles of
//    3-8 words and bodies of 40-119 words drawn from a 5,000-word vocabulary with a Zipf-like (power law, s = 1.2)
//    distribution, so common words match most topics and rare words a few; 0-3 of 200 tags (same law); statuses
//    35% draft, 25% proposed, 32% reviewed, 8% archived; half the reviewed ones with a review interval of 30, 90,
//    180 or 365 days from an approval up to two years old (so some are stale). Then ANALYZE.
// 2. For each query (rare, medium and common word, two words, common word with a tag, with min_trust reviewed, with
//    stale true) it checks once that the service and the HTTP operation return the SQL's topics in the SQL's
//    order, then per surface and concurrency (1, 8) alternates the call and its SQL in every worker, after a
//    warm-up, up to --iterations measured pairs or --max-seconds per cell, whichever comes first.
// 3. It prints a markdown table (p50/p95/p99 ms, requests/s, ratio to the SQL, whether p95 < 30 ms), then
//    EXPLAIN (ANALYZE, BUFFERS) of the SQL of the slowest query. The database is dropped unless --keep.
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Server from "@service/server/Server"
import { searchWindow, Topics } from "@service/topics/Topics"
import * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { dropDatabase, measurePairs } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const topicCount = Number(option("topics") ?? "100000")
const otherCount = Number(option("others") ?? "10000")
const iterations = Number(option("iterations") ?? "200")
const maxSeconds = Number(option("max-seconds") ?? "12")
const surfaces = (option("surface") ?? "in-process,HTTP").split(",")
const only = option("only")
const keep = args.includes("--keep")
const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "") {
  console.error("DATABASE_URL is required (the server the benchmark creates its database on).")
  process.exit(2)
}
if (!(topicCount >= 1000) || !(otherCount >= 0) || !(iterations >= 5) || !(maxSeconds > 0)) {
  console.error("usage: npx tsx bench/topics-search.ts [--topics 100000] [--others 10000] [--iterations 200] [--max-seconds 12] [--keep]")
  process.exit(2)
}
process.env["SERVICE_RATE_LIMIT_PER_MINUTE"] = "100000000"

const database = `bench_topics_${randomBytes(4).toString("hex")}`
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const TARGET_MS = 30
const LIMIT = 50
const SEARCH_WINDOW = searchWindow

// ---------------------------------------------------------------------------
// Generated text

const VOCABULARY = 5000
const ZIPF_S = 1.2
// The most frequent words are real ones, so queries read naturally; the rest are made-up words of 5-9 letters.
const frequent = [
  "the", "and", "to", "of", "a", "in", "for", "is", "on", "with", "service", "release", "deploy", "database", "api",
  "config", "team", "review", "test", "error", "build", "user", "data", "server", "request", "access", "policy",
  "checklist", "incident", "migration", "schema", "cache", "queue", "worker", "token", "auth", "session", "index",
  "query", "backup", "monitoring", "alert", "runbook", "customer", "billing", "invoice", "report", "dashboard",
  "metric", "latency", "rollback", "feature", "flag", "branch", "pipeline", "secret", "rotation", "onboarding",
  "support", "escalation"
]
/** A rank from 1 to `n`, P(k) roughly proportional to k^-s (inverse CDF of the continuous power law). */
const zipf = (n: number) => `floor(power(1 - random() * ${1 - Math.pow(n, 1 - ZIPF_S)}, ${1 / (1 - ZIPF_S)}))::int`
const wordOf = (k: string) =>
  `CASE WHEN ${k} <= ${frequent.length} THEN (ARRAY[${frequent.map((w) => `'${w}'`).join(",")}])[${k}]
    ELSE translate(substr(md5('w' || ${k}), 1, 5 + ${k} % 5), '0123456789', 'ghijklmnop') END`
const words = (count: string) =>
  `(SELECT string_agg(${wordOf("z.k")}, ' ') FROM (SELECT ${zipf(VOCABULARY)} AS k FROM generate_series(1, ${count})) z)`

/** `count` topics of one workspace, numbered from `from`. $1 workspace id. */
const insertTopics = (from: number, count: number) =>
  `INSERT INTO topics.topics (id, workspace_id, title, body, tags, patterns, status, version, review_interval_days,
     approved_by, approved_at, created_by, created_at, updated_at)
   SELECT 'topic_' || substr(md5($1 || ':' || g), 1, 24), $1,
     ${words("3 + floor(random() * 6)::int + 0 * g")},
     ${words("40 + floor(random() * 80)::int + 0 * g")},
     ARRAY(SELECT DISTINCT 'tag-' || lpad(${zipf(200)}::text, 3, '0') FROM generate_series(1, floor(random() * 4)::int + 0 * g)),
     '{}', s.status, 1 + floor(random() * 5)::int,
     CASE WHEN s.status = 'reviewed' AND s.r2 < 0.5 THEN (ARRAY[30, 90, 180, 365])[1 + floor(s.r3 * 4)::int] END,
     CASE WHEN s.status = 'reviewed' THEN 'person_bench' END, a.approved_at, NULL, s.created_at,
     coalesce(a.approved_at, s.created_at + (now() - s.created_at) * random())
   FROM generate_series(${from}, ${from + count - 1}) g,
     LATERAL (SELECT CASE WHEN r < 0.35 THEN 'draft' WHEN r < 0.6 THEN 'proposed' WHEN r < 0.92 THEN 'reviewed' ELSE 'archived' END AS status,
       now() - interval '1 day' * (30 + random() * 700) AS created_at, random() AS r2, random() AS r3
       FROM (SELECT random() AS r, g AS gg) z) s,
     LATERAL (SELECT CASE WHEN s.status = 'reviewed' THEN s.created_at + (now() - s.created_at) * random() END AS approved_at) a`

// ---------------------------------------------------------------------------
// Measurement (as operations.ts)

/** `concurrency` workers share up to `iterations` measured pairs, or `maxSeconds`, alternating which goes first. */
const measure = (op: () => Promise<unknown>, sql: () => Promise<unknown>, concurrency: number) =>
  measurePairs(op, sql, { concurrency, iterations, warmup: concurrency === 1 ? 5 : 2, maxSeconds })

// ---------------------------------------------------------------------------
// Rows read back

const Ids = Schema.Array(Schema.Struct({ id: Schema.String }))
const decodeIds = Schema.decodeUnknownSync(Ids)
const HttpAnswer = Schema.Struct({ topics: Ids })
const decodeHttp = Schema.decodeUnknownSync(Schema.parseJson(HttpAnswer))
const Count = Schema.Struct({ n: Schema.Number })
const decodeCount = Schema.decodeUnknownSync(Schema.Array(Count))
const Word = Schema.Struct({ w: Schema.String })
const decodeWord = Schema.decodeUnknownSync(Schema.Array(Word))
const Plan = Schema.Array(Schema.Struct({ "QUERY PLAN": Schema.String }))
const decodePlan = Schema.decodeUnknownSync(Plan)

interface Query {
  readonly label: string
  readonly words: ReadonlyArray<string>
  readonly tags?: ReadonlyArray<string> | undefined
  readonly minTrust?: "reviewed" | undefined
  readonly stale?: boolean | undefined
}

// ---------------------------------------------------------------------------
// Run

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  console.log(`database ${database}`)
  const pool = new pg.Pool({ connectionString: benchUrl, max: 8 })
  let dispose: () => Promise<void> = () => Promise.resolve()
  try {
    // The application, migrated by its own layer, listening on a free port.
    const services = App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto)
    const rt = ManagedRuntime.make(Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(Layer.provideMerge(services), Layer.orDie))
    dispose = () => rt.dispose()
    const address = await rt.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")

    const slug = "bench-topics"
    const { workspace, key, others } = await rt.runPromise(Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(slug), name: "Topics search bench" })
      const issued = yield* accounts.issueCredential({ workspaceId: workspace.id, kind: "api_key", label: "bench", scopes: ["context:read"] })
      const others = [
        yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("bench-topics-other-1"), name: "Other 1" }),
        yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("bench-topics-other-2"), name: "Other 2" })
      ]
      return { workspace, key: Redacted.value(issued.secret), others }
    }).pipe(Effect.orDie, quiet))

    // Bulk generation: one connection, a fixed seed, batches of 25,000.
    const loader = new pg.Client({ connectionString: benchUrl })
    await loader.connect()
    await loader.query(`SELECT setseed(0.42)`)
    const started = performance.now()
    const batch = 25_000
    for (const [id, count] of [[workspace.id, topicCount], ...others.map((w) => [w.id, otherCount] as const)] as const) {
      for (let from = 1; from <= count; from += batch) {
        await loader.query(insertTopics(from, Math.min(batch, count - from + 1)), [id])
        process.stderr.write(`  ${id}: ${fmt(Math.min(count, from + batch - 1))} / ${fmt(count)} (${fmt((performance.now() - started) / 1000)} s)\n`)
      }
    }
    const loaded = performance.now()
    await loader.query(`VACUUM ANALYZE topics.topics`)
    await loader.end()
    console.log(
      `generated ${fmt(topicCount)} + 2 x ${fmt(otherCount)} topics in ${fmt((loaded - started) / 1000, 1)} s, ` +
        `VACUUM ANALYZE ${fmt((performance.now() - loaded) / 1000, 1)} s`
    )

    // Inputs: words at chosen ranks of the vocabulary, a tag of rank 5.
    const wordAt = async (k: number) => {
      const row = decodeWord((await pool.query(`SELECT ${wordOf(String(k))} AS w`)).rows)[0]
      if (row === undefined) throw new Error("no word")
      return row.w
    }
    const rare = await wordAt(4000)
    const medium = await wordAt(300)
    const all: ReadonlyArray<Query> = [
      { label: `rare word "${rare}"`, words: [rare] },
      { label: `medium word "${medium}"`, words: [medium] },
      { label: `common word "service"`, words: ["service"] },
      { label: `two words "release checklist"`, words: ["release", "checklist"] },
      { label: `"service" + tag tag-005`, words: ["service"], tags: ["tag-005"] },
      { label: `"service" + min_trust reviewed`, words: ["service"], minTrust: "reviewed" },
      { label: `"service" + stale true`, words: ["service"], stale: true }
    ]
    const queries = all.filter((q) => only === undefined || q.label.includes(only))

    // The SQL the answer needs: the same OR query, filters, trust weighting, order and LIMIT (decision 0057).
    const sqlOf = (q: Query) => {
      const stale = `COALESCE(t.status = 'reviewed' AND t.review_interval_days IS NOT NULL
        AND t.approved_at + make_interval(days => t.review_interval_days) < now(), false)`
      const where = [
        "t.workspace_id = $1",
        "t.status <> 'archived'",
        "t.search @@ q.q",
        ...(q.tags === undefined ? [] : ["t.tags && $3::text[]"]),
        ...(q.minTrust === undefined ? [] : ["t.status IN ('reviewed')"]),
        ...(q.stale === undefined ? [] : [q.stale ? `t.status = 'reviewed' AND ${stale}` : `NOT ${stale}`])
      ]
      // Only the SEARCH_WINDOW most recently updated matches are ranked, as the service does (decision 0059).
      const text = `WITH recent AS (
          SELECT t.id FROM topics.topics t, to_tsquery('simple', $2) AS q(q) WHERE ${where.join(" AND ")}
          ORDER BY t.updated_at DESC, t.id LIMIT ${SEARCH_WINDOW})
        SELECT t.id, t.workspace_id, t.title, t.body, t.tags, t.patterns, t.status, t.version, t.review_interval_days,
          t.approved_by, t.approved_at, t.created_by, t.created_at, t.updated_at,
          ts_rank_cd(t.search, q.q) * (CASE WHEN t.status = 'reviewed' AND NOT ${stale} THEN 1.0 WHEN t.status = 'reviewed' THEN 0.6
            WHEN t.status = 'proposed' THEN 0.5 WHEN t.status = 'draft' THEN 0.3 ELSE 0.1 END) AS score
        FROM recent r JOIN topics.topics t ON t.id = r.id, to_tsquery('simple', $2) AS q(q)
        ORDER BY score DESC, t.updated_at DESC, t.id LIMIT ${LIMIT}`
      const values = [workspace.id, q.words.join(" | "), ...(q.tags === undefined ? [] : [q.tags])]
      const count = `SELECT count(*)::int AS n FROM topics.topics t, to_tsquery('simple', $2) AS q(q) WHERE ${where.join(" AND ")}`
      return { text, values, count }
    }
    const countOf = async (q: Query) => {
      const { count, values } = sqlOf(q)
      return decodeCount((await pool.query(count, values)).rows)[0]?.n ?? 0
    }

    const base = `http://127.0.0.1:${address.port}/api/v1/workspaces/${slug}/topics/search`
    const surfaceCalls = (q: Query) => {
      const { text, values } = sqlOf(q)
      const sql = async () => decodeIds((await pool.query(text, values)).rows).map((r) => r.id)
      const inProcess = () =>
        rt.runPromise(Effect.flatMap(Topics, (topics) =>
          topics.search(workspace.id, { query: q.words.join(" "), limit: LIMIT, tags: q.tags, minTrust: q.minTrust, stale: q.stale })
        )).then((result) => result.hits.map((hit) => hit.topic.id))
      const params = new URLSearchParams({ query: q.words.join(" "), limit: String(LIMIT) })
      if (q.tags !== undefined) params.set("tags", q.tags.join(","))
      if (q.minTrust !== undefined) params.set("min_trust", q.minTrust)
      if (q.stale !== undefined) params.set("stale", String(q.stale))
      const http = async () => {
        const response = await fetch(`${base}?${params.toString()}`, { headers: { "x-api-key": key } })
        const body = await response.text()
        if (response.status !== 200) throw new Error(`GET /topics/search: ${response.status} ${body.slice(0, 300)}`)
        return decodeHttp(body).topics.map((t) => t.id)
      }
      return { sql, inProcess, http }
    }

    // Same topics, same order, on every surface.
    const matches = new Map<string, number>()
    for (const q of queries) {
      const calls = surfaceCalls(q)
      const expected = (await calls.sql()).join()
      for (const [name, call] of [["in-process", calls.inProcess], ["HTTP", calls.http]] as const) {
        const got = await call()
        if (got.join() !== expected) throw new Error(`${q.label}: ${name} returned ${got.length} topics, not the SQL's`)
      }
      matches.set(q.label, await countOf(q))
      process.stderr.write(`  checked ${q.label}: ${matches.get(q.label)} matching topics, the same ${LIMIT} first on every surface\n`)
    }

    const lines: Array<string> = []
    const failures = new Set<string>()
    const slowest = { label: "", p95: 0, query: queries[0] }
    const ms = (n: number) => fmt(n, 1)
    const t0 = performance.now()
    for (const q of queries) {
      const calls = surfaceCalls(q)
      for (const surface of (["in-process", "HTTP"] as const).filter((s) => surfaces.includes(s))) {
        for (const concurrency of [1, 8]) {
          const r = await measure(surface === "HTTP" ? calls.http : calls.inProcess, calls.sql, concurrency)
          const line = `| ${q.label} | ${fmt(matches.get(q.label) ?? 0)} | ${surface} | ${concurrency} | ${r.op.n} | ` +
            `${ms(r.op.p50)} / ${ms(r.op.p95)} / ${ms(r.op.p99)} | ${ms(r.sql.p50)} / ${ms(r.sql.p95)} / ${ms(r.sql.p99)} | ` +
            `${fmt(r.op.p95 / r.sql.p95, 2)}x | ${fmt(concurrency * 1000 / r.op.mean)} / ${fmt(concurrency * 1000 / r.sql.mean)} | ` +
            `${r.op.p95 < TARGET_MS ? "yes" : "no"} | ${r.opFailures.count} / ${r.sqlFailures.count} |`
          lines.push(line)
          if (surface === "in-process" && concurrency === 1 && r.op.p95 > slowest.p95) {
            slowest.label = q.label
            slowest.p95 = r.op.p95
            slowest.query = q
          }
          for (const f of [r.opFailures.first, r.sqlFailures.first]) if (f !== undefined) failures.add(`${q.label}: ${f}`)
          process.stderr.write(`${line}  (${fmt((performance.now() - t0) / 1000)} s)\n`)
        }
      }
    }

    console.log()
    console.log(
      `${fmt(topicCount)} topics in the searched workspace, 2 x ${fmt(otherCount)} in two others; limit ${LIMIT}; up to ${iterations} measured ` +
        `calls of each side per cell or ${maxSeconds} s, after a warm-up (5 pairs per worker at concurrency 1, 2 at 8); ms; ` +
        `requests/s = concurrency / mean latency.`
    )
    console.log()
    console.log("| query | matching topics | surface | concurrency | calls | p50 / p95 / p99 ms | SQL p50 / p95 / p99 ms | p95 vs SQL p95 | requests/s (op / SQL) | p95 < 30 ms | failed (op / SQL) |")
    console.log("| - | -: | - | -: | -: | -: | -: | -: | -: | - | -: |")
    for (const line of lines) console.log(line)
    for (const failure of failures) console.log(`failure: ${failure}`)

    for (const q of [slowest.query, queries[0]]) {
      if (q === undefined) continue
      const { text, values } = sqlOf(q)
      const plan = decodePlan((await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values)).rows)
      console.log()
      console.log(`EXPLAIN (ANALYZE, BUFFERS) of the SQL of ${q.label}:`)
      console.log()
      console.log("```")
      for (const row of plan) console.log(row["QUERY PLAN"])
      console.log("```")
    }
  } finally {
    await dispose()
    await pool.end()
    if (keep) {
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
