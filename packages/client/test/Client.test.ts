/**
 * The typed client against a real listening server (`npm start`'s layers over the demo corpus), on PGlite and on
 * PostgreSQL when `DATABASE_URL` is set: typed success, typed refusal, `.all` over several pages collecting what
 * manual paging collects, and a bad credential as a typed error; through the Effect front door and the Promise
 * one. Also: every operation that declares `paginates` resolves a paging shape from its schemas.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { Api, groups, program } from "../examples/demo.js"
import * as Client from "../src/Client.js"
import * as ClientError from "../src/ClientError.js"
import * as Paging from "../src/Paging.js"
import { createClient } from "../src/PromiseClient.js"

const KEY = "svc_key_client_demo_0123456789abcdef"

class Running extends Context.Tag("Running")<Running, { readonly baseUrl: string }>() {}


const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}` }
  })
)

// The client as a host wires it: a service under its own tag, over fetch, pointed at the running server.
const api = Layer.unwrapEffect(
  Effect.map(Running, ({ baseUrl }) => Client.layer(Api, { groups, baseUrl, apiKey: Redacted.make(KEY), workspace: "demo" }))
).pipe(Layer.provide(FetchHttpClient.layer))

const query = { state: "Zacatecas", limit: 3 } as const

describe("paging rule", () => {
  it("every operation that declares paginates resolves a shape; no other does", () => {
    const operations = App.groups.flatMap((group) => group.operations)
    const resolved = operations.filter((op) => Option.isSome(Paging.shapeOf(op))).map((op) => op.name)
    const declared = operations.filter((op) => op.paginates).map((op) => op.name)
    assert.deepStrictEqual(resolved, declared)
    assert.isAtLeast(declared.length, 10)
    // Rows for `.all` everywhere but the supplier history, whose results are totals plus a page of awards.
    const withoutRows = operations.filter((op) => Option.exists(Paging.shapeOf(op), (shape) => Option.isNone(shape.rows))).map((op) => op.name)
    assert.deepStrictEqual(withoutRows, ["get_supplier_history"])
    // The same rule in the types: `.all` only where a rows array is found, `.pages` wherever the operation pages.
    type Market = Client.Client<typeof groups>["market"]
    const historyPages: "pages" extends keyof Market["getSupplierHistory"] ? true : false = true
    const historyAll: "all" extends keyof Market["getSupplierHistory"] ? true : false = false
    const searchAll: "all" extends keyof Market["searchSuppliers"] ? true : false = true
    const getAll: "all" extends keyof Market["getSupplier"] ? true : false = false
    assert.deepStrictEqual([historyPages, historyAll, searchAll, getAll], [true, false, true, false])
  })
})

for (const target of TestDatabase.targets()) {
  const Env = api.pipe(
    Layer.provideMerge(running),
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(ensureDemo(Option.some(Redacted.make(KEY)))))),
    Layer.provideMerge(App.layer(TestDatabase.prepared(target, DemoSnapshot.over(App.migrations)), Crypto.layerTest)),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`client on ${target.name}`, (it) => {
    it.effect("a call succeeds with the decoded output", () =>
      Effect.gen(function*() {
        const client = yield* Api
        const page = yield* client.market.searchSuppliers(query)
        assert.strictEqual(page.schemaVersion, "market-data/domain/1")
        assert.strictEqual(page.results.length, 3)
        assert.isTrue(page.page?.hasMore)
        const me = yield* client.whoami.whoami()
        assert.strictEqual(me.workspace.slug, "demo")
      }))

    it.effect("the documented example (examples/demo.ts) runs as printed", () =>
      Effect.gen(function*() {
        const lines = yield* program
        assert.match(lines[0] ?? "", /^workspace demo as owner \(\d+ scopes\)$/)
        const first = Number(/^first page: (\d+) rows, more: (true|false)$/.exec(lines[1] ?? "")?.[1])
        const all = Number(/^all pages: (\d+) rows$/.exec(lines.find((line) => line.startsWith("all pages")) ?? "")?.[1])
        assert.isAbove(first, 0)
        assert.isAtLeast(all, first)
        assert.match(lines.at(-1) ?? "", /^refused: invalid_record_ref \(search_again\): /)
      }))

    it.effect("a refusal is a typed error carrying the API's block", () =>
      Effect.gen(function*() {
        const client = yield* Api
        const refused = yield* Effect.flip(client.market.getSupplier({ record_ref: "rr_not_a_ref" }))
        assert.strictEqual(refused._tag, "Refused")
        if (refused._tag !== "Refused") return
        assert.strictEqual(refused.code, "invalid_record_ref")
        assert.strictEqual(refused.status, 404)
        assert.strictEqual(refused.key, "market_data")
        assert.strictEqual(refused.block["semantic_code"] ?? refused.block["code"], "invalid_record_ref")
        assert.isString(refused.requestId)
        // Refused before sending: the block the server would send, no status.
        const local = yield* Effect.flip(client.market.searchSuppliers({ ...query, limit: 0 }))
        assert.strictEqual(local._tag, "Refused")
        if (local._tag === "Refused") {
          assert.strictEqual(local.status, undefined)
          assert.strictEqual(local.code, "invalid_field_value")
        }
      }))

    it.effect(".all follows the next cursor over several pages and yields the rows manual paging reads", () =>
      Effect.gen(function*() {
        const client = yield* Api
        const manual: Array<string> = []
        let pages = 0
        let cursor: string | undefined
        do {
          const page = yield* client.market.searchSuppliers(cursor === undefined ? query : { ...query, cursor })
          pages += 1
          manual.push(...page.results.map((row) => row.record_ref))
          cursor = page.page?.nextCursor ?? undefined
        } while (cursor !== undefined)
        assert.isAtLeast(pages, 2)
        const rows = Chunk.toReadonlyArray(yield* Stream.runCollect(client.market.searchSuppliers.all(query)))
        // Refs are sealed afresh on every read: compare what they point at.
        assert.strictEqual(rows.length, manual.length)
        const names = rows.map((row) => `${row.name}|${row.state?.code}`)
        const pagesCollected = Chunk.toReadonlyArray(yield* Stream.runCollect(client.market.searchSuppliers.pages(query)))
        assert.strictEqual(pagesCollected.length, pages)
        assert.deepStrictEqual(names, pagesCollected.flatMap((page) => page.results.map((row) => `${row.name}|${row.state?.code}`)))
      }))

    it.effect("a bad credential is a typed Unauthenticated; a foreign workspace a WorkspaceNotFound", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const wrong = yield* Client.make({ groups, baseUrl, apiKey: Redacted.make("svc_key_wrong_0123456789abcdef"), workspace: "demo" })
        const denied = yield* Effect.flip(wrong.market.searchSuppliers(query))
        assert.instanceOf(denied, ClientError.Unauthenticated)
        const elsewhere = yield* Client.make({ groups, baseUrl, apiKey: Redacted.make(KEY), workspace: "not-mine" })
        const missing = yield* Effect.flip(elsewhere.whoami.whoami())
        assert.instanceOf(missing, ClientError.WorkspaceNotFound)
      }).pipe(Effect.provide(FetchHttpClient.layer)))

    it.effect("the Promise client: the same calls, rejections are the tagged errors, .all is an async iterable", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const outcome = yield* Effect.promise(async () => {
          const client = createClient({ groups, baseUrl, apiKey: KEY, workspace: "demo" })
          const first = await client.market.searchSuppliers(query)
          const rows: Array<string> = []
          for await (const row of client.market.searchSuppliers.all(query)) rows.push(`${row.name}|${row.state?.code}`)
          const refused = await client.market.getSupplier({ record_ref: "rr_not_a_ref" }).then(() => undefined, (error: unknown) => error)
          const denied = await createClient({ groups, baseUrl, apiKey: "svc_key_wrong_0123456789abcdef", workspace: "demo" })
            .whoami.whoami().then(() => undefined, (error: unknown) => error)
          return { first, rows, refused, denied }
        })
        assert.strictEqual(outcome.first.results.length, 3)
        assert.isAbove(outcome.rows.length, 3)
        assert.instanceOf(outcome.refused, ClientError.Refused)
        if (outcome.refused instanceof ClientError.Refused) assert.strictEqual(outcome.refused.code, "invalid_record_ref")
        assert.instanceOf(outcome.denied, ClientError.Unauthenticated)
      }))
  })
}
