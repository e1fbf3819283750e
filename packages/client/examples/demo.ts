/**
 * The typed client against `npm start`: the first page of a search, every row of it through `.all`, a refusal
 * read from its tagged error, and who the key is. Run it beside `npm start`:
 *
 *   SERVICE_API_KEY=$(cat .data/demo-api-key) npx tsx packages/client/examples/demo.ts
 *
 * (`SERVICE_BASE_URL` defaults to http://127.0.0.1:3000, `SERVICE_WORKSPACE` to demo.) `Client.test.ts` runs
 * `program` against a real server.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as WhoamiOperations from "@service/identity/WhoamiOperations"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Client from "../src/Client.js"

/** The groups this host calls, under the keys it picks. */
export const groups = { market: MarketOperations.group, whoami: WhoamiOperations.group }

/** The host's own tag for its client. */
export class Api extends Context.Tag("Api")<Api, Client.Client<typeof groups>>() {}

/** What the example prints, as lines. */
export const program = Effect.gen(function*() {
  const api = yield* Api
  const lines: Array<string> = []
  const me = yield* api.whoami.whoami()
  lines.push(`workspace ${me.workspace.slug} as ${me.role} (${me.scopes.length} scopes)`)
  const query = { state: "Zacatecas", scian_codes: ["212"], limit: 5 }
  const first = yield* api.market.searchSuppliers(query)
  lines.push(`first page: ${first.results.length} rows, more: ${first.page?.hasMore ?? false}`)
  for (const row of first.results) lines.push(`  ${row.name} (${row.municipality?.name ?? "?"}, ${row.state?.name ?? "?"})`)
  // Every row of every page: one request per page, following the sealed next cursor.
  const all = yield* Stream.runCount(api.market.searchSuppliers.all(query))
  lines.push(`all pages: ${all} rows`)
  // A refusal is a typed error with the API's block: its code and the recovery it names.
  const refused = yield* api.market.getSupplier({ record_ref: "not-a-ref" }).pipe(
    Effect.as("no refusal"),
    Effect.catchTag("Refused", (refusal) => Effect.succeed(`refused: ${refusal.code} (${refusal.action}): ${refusal.message}`))
  )
  lines.push(refused)
  return lines
})

/** The client from `SERVICE_BASE_URL`, `SERVICE_API_KEY` and `SERVICE_WORKSPACE`. */
export const ApiLive = Client.layerConfig(
  Api,
  groups,
  Config.all({
    baseUrl: Config.string("SERVICE_BASE_URL").pipe(Config.withDefault("http://127.0.0.1:3000")),
    apiKey: Config.redacted("SERVICE_API_KEY"),
    workspace: Config.string("SERVICE_WORKSPACE").pipe(Config.withDefault("demo"))
  })
).pipe(Layer.provide(FetchHttpClient.layer))

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program.pipe(Effect.provide(ApiLive))).then(
    (lines) => console.log(lines.join("\n")),
    (error: unknown) => {
      console.error(String(error))
      process.exitCode = 1
    }
  )
}
