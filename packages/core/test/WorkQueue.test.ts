import * as SqlClient from "@effect/sql/SqlClient"
import * as CoreNotifications from "../src/Notifications.js"
import * as StorageNotifications from "@service/storage/Notifications"
import { assert, describe, layer } from "@effect/vitest"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as WorkQueue from "../src/WorkQueue.js"

const tables = ["killed", "failing", "fenced", "interrupted", "long", "parallel", "later", "concurrent", "postponed", "lastlease", "own", "woken", "recorded"] as const
type Table = typeof tables[number]

// A domain table that holds work: its own columns plus the queue's.
const migrations = {
  name: "queue_test",
  dependsOn: ["storage"],
  migrations: {
    "0001_items": Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE SCHEMA queue_test`
      // One table per test: a queue claims any due row of its table, and each test has a clock of its own.
      for (const name of tables) {
        yield* sql.unsafe(`CREATE TABLE queue_test.${name} (id bigserial PRIMARY KEY, applied integer NOT NULL DEFAULT 0, ${WorkQueue.columns})`)
        yield* sql.unsafe(WorkQueue.indexSql(`queue_test.${name}`, `${name}_queue_idx`))
      }
      for (const statement of WorkQueue.notifySql("queue_test.woken")) yield* sql.unsafe(statement)
    })
  }
} as const

const spec = (table: Table): WorkQueue.Spec => ({ table: `queue_test.${table}`, lease: "30 seconds", retryDelays: ["1 minute", "5 minutes"] })

const Row = Schema.Struct({
  id: Schema.String,
  state: Schema.String,
  attempts: Schema.Number,
  applied: Schema.Number,
  error: Schema.NullOr(Schema.String)
})

const insert = (table: Table, n: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO ${sql(`queue_test.${table}`)} (applied) SELECT 0 FROM generate_series(1, ${n}) RETURNING id::text AS id`.pipe(
      Effect.map((rows) => rows.map((row) => String(row["id"]))),
      Effect.orDie
    ))

const rowsOf = (table: Table) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT id::text AS id, queue_state AS state, queue_attempts AS attempts, applied, queue_last_error AS error
        FROM ${sql(`queue_test.${table}`)} ORDER BY id`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))), Effect.orDie))

// The handler's domain write: applying an item counts once per committed attempt.
const applyIn = (table: Table) => (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE ${sql(`queue_test.${table}`)} SET applied = applied + 1 WHERE id = ${id}::bigint`.pipe(Effect.orDie))

for (const target of TestDatabase.parityTargets()) {
  describe(`WorkQueue on ${target.name}`, () => {
    // Workers hear their table's notifications through core's port, as App.layer connects it.
    const database = Layer.effect(CoreNotifications.Notifications, StorageNotifications.Notifications).pipe(
      Layer.provideMerge(TestDatabase.withMigrations(target, [migrations])),
      Layer.orDie
    )
    layer(database, { timeout: "120 seconds" })((it) => {
      it.effect("claimRow leases only the row named, only when due; handle makes one attempt, also where the caller is uninterruptible", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("own"))
          const apply = applyIn("own")
          const [mine, other] = yield* insert("own", 2)
          const claim = yield* queue.claimRow("request-a", mine ?? "")
          assert.deepStrictEqual(claim._tag === "Some" ? [claim.value.id, claim.value.attempt] : [], [mine, 1])
          // Held: nobody else claims it, not even by name, until the lease runs out.
          assert.strictEqual((yield* queue.claimRow("request-b", mine ?? ""))._tag, "None")
          // An MCP tool call runs uninterruptibly: the attempt must still end (its heartbeat is interrupted).
          if (claim._tag === "Some") yield* Effect.uninterruptible(queue.handle({ worker: "request-a", handler: (c) => apply(c.id) }, claim.value))
          const rows = yield* rowsOf("own")
          assert.deepStrictEqual(rows.map((r) => [r.id, r.state, r.attempts, r.applied]), [[mine, "done", 1, 1], [other, "pending", 0, 0]])
          assert.strictEqual((yield* queue.claimRow("request-b", mine ?? ""))._tag, "None")
        }))

      it.effect("a worker killed holding an item loses nothing: the lease expires and another worker finishes it", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("killed"))
          const apply = applyIn("killed")
          const [id] = yield* insert("killed", 1)
          // Worker A claims the item and dies: its claim is committed, nothing else ever happens.
          const [held] = yield* queue.claim("worker-a", 10)
          assert.strictEqual(held?.id, id)
          assert.strictEqual(held?.attempt, 1)
          // While the lease runs, nobody else gets the item.
          yield* TestClock.adjust("29 seconds")
          assert.strictEqual(yield* queue.drain({ worker: "worker-b", handler: (c) => apply(c.id) }), 0)
          yield* TestClock.adjust("2 seconds")
          assert.strictEqual(yield* queue.drain({ worker: "worker-b", handler: (c) => apply(c.id) }), 1)
          const [row] = yield* rowsOf("killed")
          assert.deepStrictEqual([row?.state, row?.attempts, row?.applied], ["done", 2, 1])
          // A, back from the dead, can no longer complete or fail it.
          if (held === undefined) return
          assert.isTrue(Either.isLeft(yield* Effect.either(queue.complete(held))))
          assert.isTrue(Either.isLeft(yield* Effect.either(queue.fail(held, "late"))))
        }))

      it.effect("a failing item is retried on the schedule and is dead after its last attempt, with its error", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("failing"))
          const apply = applyIn("failing")
          yield* insert("failing", 1)
          const dead: Array<string> = []
          const failing = {
            worker: "w",
            handler: () => Effect.fail("the CRM said no"),
            onDead: (claim: WorkQueue.Claim, error: string) => Effect.sync(() => void dead.push(`${claim.id}:${claim.attempt}:${error}`))
          }
          assert.strictEqual(yield* queue.drain(failing), 1)
          assert.deepStrictEqual((yield* rowsOf("failing")).map((r) => [r.state, r.attempts]), [["pending", 1]])
          // Not due before its first delay (1 minute).
          yield* TestClock.adjust("59 seconds")
          assert.strictEqual(yield* queue.drain(failing), 0)
          yield* TestClock.adjust("1 second")
          assert.strictEqual(yield* queue.drain(failing), 1)
          yield* TestClock.adjust("5 minutes")
          assert.strictEqual(yield* queue.drain(failing), 1)
          const [row] = yield* rowsOf("failing")
          assert.deepStrictEqual([row?.state, row?.attempts, row?.applied], ["dead", 3, 0])
          assert.include(row?.error ?? "", "the CRM said no")
          // Told once, after the last attempt.
          assert.strictEqual(dead.length, 1)
          assert.match(dead[0] ?? "", new RegExp(`^${row?.id}:3:.*the CRM said no`))
          // Dead is final: no later round takes it.
          yield* TestClock.adjust("1 day")
          assert.strictEqual(yield* queue.drain(failing), 0)
          // Until someone requeues it, with its attempts reset.
          assert.strictEqual(yield* queue.requeue([row?.id ?? ""]), 1)
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: (c) => apply(c.id) }), 1)
          assert.deepStrictEqual((yield* rowsOf("failing")).map((r) => [r.state, r.attempts, r.applied]), [["done", 1, 1]])
        }))

      it.effect("a handler's RetryLater waits for the later of the schedule and its notBefore", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("later"))
          yield* insert("later", 1)
          const start = yield* TestClock.currentTimeMillis
          const handler = (notBefore: number | undefined) => () => Effect.fail(new WorkQueue.RetryLater({ error: "503 from the receiver", notBefore }))
          // Retry-After of 10 minutes, past the schedule's 1 minute: not due at 1 minute, due at 10.
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: handler(start + 10 * 60_000) }), 1)
          yield* TestClock.adjust("9 minutes")
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: handler(undefined) }), 0)
          yield* TestClock.adjust("1 minute")
          // A notBefore earlier than the schedule (5 minutes after attempt 2) does not make it earlier.
          const second = yield* TestClock.currentTimeMillis
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: handler(second + 1_000) }), 1)
          yield* TestClock.adjust("4 minutes")
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: handler(undefined) }), 0)
          yield* TestClock.adjust("1 minute")
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: handler(undefined) }), 1)
          const [row] = yield* rowsOf("later")
          assert.deepStrictEqual([row?.state, row?.attempts, row?.error], ["dead", 3, "503 from the receiver"])
        }))

      it.effect("a worker that dies holding the last attempt: the next round finds the row dead and calls onDead", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("lastlease"))
          yield* insert("lastlease", 1)
          const failing = () => Effect.fail("503")
          // Attempts 1 and 2 fail on the schedule; attempt 3 is the last, and its worker dies holding it.
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: failing }), 1)
          yield* TestClock.adjust("1 minute")
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: failing }), 1)
          yield* TestClock.adjust("5 minutes")
          const [last] = yield* queue.claim("dies", 10)
          assert.strictEqual(last?.attempt, 3)
          yield* TestClock.adjust("31 seconds")
          const dead: Array<[string, number, string, string]> = []
          const onDead = (claim: WorkQueue.Claim, error: string) => Effect.sync(() => void dead.push([claim.id, claim.attempt, claim.worker, error]))
          assert.strictEqual(yield* queue.drain({ worker: "next", handler: failing, onDead }), 0)
          // The error is the last one recorded (attempt 2's): the dead worker recorded nothing.
          assert.deepStrictEqual(dead, [[last?.id ?? "", 3, "dies", "Error: 503"]])
          const [row] = yield* rowsOf("lastlease")
          assert.deepStrictEqual([row?.state, row?.attempts], ["dead", 3])
          // Found once: the next round does not call it again.
          assert.strictEqual(yield* queue.drain({ worker: "next", handler: failing, onDead }), 0)
          assert.strictEqual(dead.length, 1)
        }))

      it.effect("a handler's Postpone gives the row back untried until its time, the attempt not counted", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("postponed"))
          yield* insert("postponed", 1)
          const postpone = () =>
            Effect.flatMap(TestClock.currentTimeMillis, (now) =>
              Effect.fail(new WorkQueue.Postpone({ until: now + 60 * 60_000, reason: "the receiver's circuit is open" })))
          // Postponed three times over: never dead (the schedule allows three attempts), never due before its time.
          for (let i = 0; i < 3; i++) {
            assert.strictEqual(yield* queue.drain({ worker: "w", handler: postpone }), 1)
            const [row] = yield* rowsOf("postponed")
            assert.deepStrictEqual([row?.state, row?.attempts, row?.error], ["pending", 0, "the receiver's circuit is open"])
            yield* TestClock.adjust("59 minutes")
            assert.strictEqual(yield* queue.drain({ worker: "w", handler: postpone }), 0)
            yield* TestClock.adjust("1 minute")
          }
          assert.strictEqual(yield* queue.drain({ worker: "w", handler: (c) => applyIn("postponed")(c.id) }), 1)
          assert.deepStrictEqual((yield* rowsOf("postponed")).map((r) => [r.state, r.attempts, r.applied]), [["done", 1, 1]])
        }))

      it.effect("with concurrency, a slow item does not hold the rest of its batch", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("concurrent"))
          const ids = yield* insert("concurrent", 4)
          const slow = ids[0] ?? ""
          const release = yield* Deferred.make<void>()
          const done: Array<string> = []
          const fiber = yield* Effect.fork(queue.drain({
            worker: "w",
            batch: 4,
            concurrency: 4,
            transactional: false,
            handler: (c) =>
              Effect.zipRight(c.id === slow ? Deferred.await(release) : Effect.void, Effect.sync(() => void done.push(c.id)))
          }))
          // The three others finish while the first still waits.
          while (done.length < 3) yield* Effect.yieldNow()
          assert.isFalse(done.includes(slow))
          yield* Deferred.succeed(release, undefined)
          assert.strictEqual(yield* Fiber.join(fiber), 4)
          assert.deepStrictEqual([...done].sort(), [...ids].sort())
        }))

      it.effect("a failed attempt's writes are rolled back; a worker that lost its lease commits nothing", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("fenced"))
          const apply = applyIn("fenced")
          yield* insert("fenced", 2)
          // Writes, then fails: the write is undone with the attempt.
          yield* queue.drain({ worker: "w", handler: (c) => Effect.zipRight(apply(c.id), Effect.fail("after writing")), batch: 1 })
          const afterFailure = yield* rowsOf("fenced")
          assert.deepStrictEqual(afterFailure.map((r) => r.applied), [0, 0])
          // A slow attempt outlives its lease (no heartbeat can run while the clock jumps), another worker takes
          // the row and finishes; the slow one's writes are not committed.
          yield* TestClock.adjust("1 minute")
          const slow = yield* queue.drain({
            worker: "slow",
            handler: (c) =>
              Effect.gen(function*() {
                yield* apply(c.id)
                const sql = yield* SqlClient.SqlClient
                // The takeover, as another worker commits it while this attempt is still running.
                yield* sql`UPDATE queue_test.fenced SET queue_worker = 'other', queue_attempts = queue_attempts + 1
                           WHERE id = ${c.id}::bigint`
              }).pipe(Effect.orDie)
          })
          assert.strictEqual(slow, 2)
          assert.deepStrictEqual((yield* rowsOf("fenced")).map((r) => r.applied), [0, 0])
        }))

      it.effect("an interrupted worker gives back the item in hand and the rest of its batch, untried", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("interrupted"))
          const apply = applyIn("interrupted")
          yield* insert("interrupted", 3)
          const started = yield* Deferred.make<void>()
          const fiber = yield* Effect.fork(
            queue.drain({ worker: "w", batch: 3, handler: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), transactional: false })
          )
          yield* Deferred.await(started)
          yield* Fiber.interrupt(fiber)
          // No lease to wait out: all three are due again at once, none counted as tried.
          assert.deepStrictEqual((yield* rowsOf("interrupted")).map((r) => [r.state, r.attempts]), [["pending", 0], ["pending", 0], ["pending", 0]])
          assert.strictEqual(yield* queue.drain({ worker: "w2", handler: (c) => apply(c.id) }), 3)
        }))

      it.effect("a long attempt keeps its lease alive", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("long"))
          yield* insert("long", 1)
          const fiber = yield* Effect.fork(
            queue.drain({ worker: "long", handler: () => Effect.sleep("2 minutes"), transactional: false })
          )
          // Four times the lease, in steps the heartbeat (every 10 s) sees.
          for (let i = 0; i < 12; i++) {
            yield* TestClock.adjust("10 seconds")
            assert.strictEqual(yield* queue.drain({ worker: "thief", handler: () => Effect.void }), 0)
          }
          yield* TestClock.adjust("10 seconds")
          yield* Fiber.join(fiber)
          assert.deepStrictEqual((yield* rowsOf("long")).map((r) => [r.state, r.attempts]), [["done", 1]])
        }))

      it.effect("an idle worker is woken by a row's notification, not its poll; a row due later wakes it at its time", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("woken"))
          const apply = applyIn("woken")
          const rounds = yield* Queue.unbounded<number>()
          const handled = yield* Queue.unbounded<string>()
          const fiber = yield* Effect.fork(queue.process({
            worker: "listener",
            // The fallback poll is an hour, and the test clock never gets there.
            idle: "1 hour",
            handler: (c) => Effect.zipRight(apply(c.id), Queue.offer(handled, c.id)),
            onRound: (attempted) => Queue.offer(rounds, attempted)
          }))
          assert.strictEqual(yield* Queue.take(rounds), 0)
          const [first] = yield* insert("woken", 1)
          // Only the insert's notification can end the worker's wait: the clock does not move.
          assert.strictEqual(yield* Queue.take(handled), first)
          // A row due in 5 minutes (its notification wakes the worker, which finds nothing due yet): then it sleeps
          // until the row's time, not for its hour.
          const sql = yield* SqlClient.SqlClient
          const millis = yield* Clock.currentTimeMillis
          const [later] = yield* sql`INSERT INTO queue_test.woken (queue_next_attempt_at)
            VALUES (${new Date(millis + 5 * 60_000).toISOString()}::timestamptz) RETURNING id::text AS id`.pipe(
            Effect.map((rows) => rows.map((row) => String(row["id"]))),
            Effect.orDie
          )
          let minutes = 0
          while (Option.isNone(yield* Queue.poll(handled))) {
            assert.isBelow(minutes, 10, "the row due in 5 minutes waited for the poll")
            yield* TestClock.adjust("1 minute")
            minutes++
            // Real time for the worker's statements between two steps of the test clock.
            yield* TestServices.provideLive(Effect.sleep("100 millis"))
          }
          assert.isAtLeast(minutes, 5)
          yield* Fiber.interrupt(fiber)
          assert.deepStrictEqual((yield* rowsOf("woken")).map((r) => [r.id, r.state, r.applied]), [[first, "done", 1], [later, "done", 1]])
        }))

      it.effect("a batch claimed in one statement, handled at once; each outcome recorded with its completion, none for a claim taken over", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("recorded"))
          const apply = applyIn("recorded")
          const ids = yield* insert("recorded", 5)
          const sql = yield* SqlClient.SqlClient
          const taken = ids[1] ?? ""
          const attempted = yield* queue.drain({
            worker: "batch",
            batch: 5,
            concurrency: 5,
            transactional: false,
            handler: (c) =>
              c.id === taken
                // Another worker takes this row over while the attempt calls out.
                ? sql`UPDATE queue_test.recorded SET queue_worker = 'other', queue_attempts = queue_attempts + 1
                    WHERE id = ${c.id}::bigint`.pipe(Effect.orDie, Effect.as(c.id))
                : Effect.succeed(c.id),
            // The outcome's writes: committed only with a completion that still holds the row.
            record: (_, id) => apply(id)
          })
          assert.strictEqual(attempted, 5)
          const rows = yield* rowsOf("recorded")
          assert.deepStrictEqual(
            rows.map((r) => [r.id, r.state, r.applied]),
            ids.map((id) => (id === taken ? [id, "running", 0] : [id, "done", 1]))
          )
        }))

      it.effect("several workers at once: every item handled exactly once, never by two workers at the same time", () =>
        Effect.gen(function*() {
          const queue = yield* WorkQueue.make(spec("parallel"))
          const apply = applyIn("parallel")
          const ids = yield* insert("parallel", 60)
          const active = new Set<string>()
          const overlaps: Array<string> = []
          const handledBy = new Map<string, Array<string>>()
          const worker = (name: string) =>
            queue.drain({
              worker: name,
              batch: 3,
              handler: (c) =>
                Effect.gen(function*() {
                  if (active.has(c.id)) overlaps.push(c.id)
                  active.add(c.id)
                  handledBy.set(c.id, [...(handledBy.get(c.id) ?? []), name])
                  yield* apply(c.id)
                  // Let the other workers run while this one holds the item.
                  for (let i = 0; i < 3; i++) yield* Effect.yieldNow()
                  active.delete(c.id)
                })
            })
          const counts = yield* Effect.all(["w1", "w2", "w3", "w4"].map(worker), { concurrency: "unbounded" })
          assert.strictEqual(counts.reduce((a, b) => a + b, 0), 60)
          assert.deepStrictEqual(overlaps, [])
          assert.deepStrictEqual([...handledBy.keys()].sort(), [...ids].sort())
          assert.isTrue([...handledBy.values()].every((by) => by.length === 1))
          const rows = yield* rowsOf("parallel")
          assert.isTrue(rows.every((r) => r.state === "done" && r.applied === 1 && r.attempts === 1))
        }))
    })
  })
}
