// Helpers shared by the benchmarks: nearest-rank percentiles, a timed call that counts failures, dropping a
// throwaway database, and counting the statements this process sends through `pg`.
import pg from "pg"

export interface Stats {
  readonly n: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly mean: number
}

/** Nearest rank: with 30 samples p95 is the 29th and p99 the 30th (the slowest). */
export const stats = (samples: ReadonlyArray<number>): Stats => {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length }
}

export interface Failures {
  count: number
  first: string | undefined
}

/** The latency of one call; a failed call (e.g. a refusal) counts with its latency and is tallied. */
export const timed = async (f: () => Promise<unknown>, failures: Failures): Promise<number> => {
  const started = performance.now()
  await f().catch((error: unknown) => {
    failures.count++
    failures.first ??= (String(error).split("\n")[0] ?? "").slice(0, 300)
  })
  return performance.now() - started
}

/** The minimal client the drop needs (a `pg` Client or Pool). */
export interface Admin {
  readonly query: (text: string) => Promise<unknown>
}

/**
 * Drops a benchmark's database. The service's pool closes in the background (its release waits 1 s at most):
 * wait for its sessions to go rather than terminate them under it, and force only after 10 s.
 */
export const dropDatabase = async (admin: Admin, database: string): Promise<void> => {
  for (let attempt = 0; ; attempt++) {
    const dropped = await admin.query(`DROP DATABASE IF EXISTS ${database}${attempt < 20 ? "" : " WITH (FORCE)"}`).then(
      () => true,
      (error: unknown) => {
        if (attempt >= 20) throw error
        return false
      }
    )
    if (dropped) return
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/**
 * `concurrency` workers share up to `iterations` measured pairs of `op` and its baseline `sql` (after `warmup`
 * unmeasured pairs per worker), each worker alternating which goes first; with `maxSeconds`, measuring also stops
 * that long after the last worker is warm (once every worker has two samples).
 */
export const measurePairs = async (
  op: () => Promise<unknown>,
  sql: () => Promise<unknown>,
  options: { readonly concurrency: number; readonly iterations: number; readonly warmup: number; readonly maxSeconds?: number | undefined }
) => {
  const { concurrency, iterations, maxSeconds, warmup } = options
  const opSamples: Array<number> = []
  const sqlSamples: Array<number> = []
  const opFailures: Failures = { count: 0, first: undefined }
  const sqlFailures: Failures = { count: 0, first: undefined }
  const ignored: Failures = { count: 0, first: undefined }
  let next = 0
  let deadline = Infinity
  let warming = concurrency
  const worker = async (w: number) => {
    for (let i = 0; i < warmup; i++) {
      await timed(op, ignored)
      await timed(sql, ignored)
    }
    if (--warming === 0 && maxSeconds !== undefined) deadline = performance.now() + maxSeconds * 1000
    for (let i = w; next < iterations && (performance.now() < deadline || opSamples.length < 2 * concurrency); i++) {
      next++
      if (i % 2 === 0) {
        opSamples.push(await timed(op, opFailures))
        sqlSamples.push(await timed(sql, sqlFailures))
      } else {
        sqlSamples.push(await timed(sql, sqlFailures))
        opSamples.push(await timed(op, opFailures))
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)))
  return { op: stats(opSamples), sql: stats(sqlSamples), opFailures, sqlFailures }
}

/** A `pg` client or pool, as far as {@link commitsSoFar} needs one. */
export interface StatsReader {
  readonly query: (text: string) => Promise<{ readonly rows: ReadonlyArray<unknown> }>
}

/**
 * How long to wait after the measured work before reading {@link commitsSoFar}: PostgreSQL 15 backends report their
 * counts at most once a second while busy, and within 10 s once idle (or when they exit).
 */
export const STATS_FLUSH_MS = 11_000

/**
 * Transactions committed in the reader's database so far (`pg_stat_database.xact_commit`, read-only ones included;
 * this read counts one too). Commits per item are the difference of two readings over the items.
 */
export const commitsSoFar = async (reader: StatsReader): Promise<number> => {
  const result = await reader.query("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()")
  const row = result.rows[0]
  return typeof row === "object" && row !== null && "n" in row ? Number(row.n) : Number.NaN
}

/**
 * Counts every query this process's `pg` clients send from now on (BEGIN, COMMIT and SAVEPOINT included), except
 * those of the clients given to `exclude` (the benchmark's own): the server's statements when it runs in process.
 */
export const countPgStatements = () => {
  const own = new WeakSet<pg.Client>()
  let statements = 0
  const driverQuery: Function = pg.Client.prototype.query
  Object.defineProperty(pg.Client.prototype, "query", {
    configurable: true,
    writable: true,
    value: function(this: pg.Client, ...args: Array<unknown>): unknown {
      if (!own.has(this)) statements += 1
      return Reflect.apply(driverQuery, this, args)
    }
  })
  return { count: () => statements, exclude: (client: pg.Client) => own.add(client) }
}
