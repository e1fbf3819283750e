/**
 * `npm start`: the node HTTP runtime on embedded PGlite (or PostgreSQL with DATABASE_URL), with the demo
 * corpus and workspace bootstrapped on first start.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import * as Database from "@service/storage/Database"
import * as LocalKeys from "@service/core/LocalKeys"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as AppLayer from "./AppLayer.js"
import { ensureDemo } from "./Bootstrap.js"
import * as Server from "./Server.js"

const startedAt = performance.now()

const settings = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(3000), Config.withDescription("HTTP port")),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1"), Config.withDescription("Interface to bind")),
  demoKey: Config.option(Config.redacted("SERVICE_DEMO_API_KEY"))
})

const program = Effect.gen(function*() {
  const { demoKey, host, port } = yield* settings
  const services = AppLayer.make(Database.layerFromConfig, LocalKeys.layer)
  const prepared = Layer.effectDiscard(
    Effect.gen(function*() {
      const loaded = yield* DemoCorpus.ensureLoaded
      if (Option.isSome(loaded)) {
        const reports = loaded.value.reports
        const total = (pick: (r: (typeof reports)[number]["records"]) => number) => reports.reduce((sum, r) => sum + pick(r.records), 0)
        yield* Effect.logInfo(
          `Loaded and published the demo corpus from ${reports.length} files: ${total((r) => r.supplierObservations)} supplier observations, ` +
            `${total((r) => r.opportunities)} opportunities, ${total((r) => r.awards)} awards, ${total((r) => r.riskMarks)} risk marks, ` +
            `${total((r) => r.permits)} permits`
        )
      }
    })
  )
  return yield* Effect.gen(function*() {
    const info = yield* Database.DatabaseInfo
    const demo = yield* ensureDemo(demoKey)
    const server = yield* HttpServer.HttpServer
    const address = server.address._tag === "TcpAddress" ? server.address : undefined
    // Print the address curl can reach as printed: the bound one, or loopback for a wildcard bind.
    const shownHost = address === undefined || address.hostname === "0.0.0.0" || address.hostname === "::"
      ? "127.0.0.1"
      : address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    const base = `http://${shownHost}:${address?.port ?? port}`
    const key = Redacted.value(demo.apiKey)
    const market = `${base}/api/v1/workspaces/${demo.slug}/market-data`
    const elapsed = Math.round(performance.now() - startedAt)
    const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024)
    yield* Console.log(
      [
        ``,
        `service is listening on ${base}  (ready in ${elapsed} ms, RSS ${rssMb} MB, database: ${info.description})`,
        ``,
        `  workspace   ${demo.slug}`,
        `  API key     ${key}`,
        demo.apiKeyFixed
          ? `              (fixed by SERVICE_DEMO_API_KEY)`
          : `              (shown once; a new one is minted each start unless SERVICE_DEMO_API_KEY is set)`,
        `  OpenAPI     ${base}/openapi.json`,
        `  API docs    ${base}/docs`,
        `  MCP         ${base}/mcp  (streamable HTTP; same x-api-key)`,
        ``,
        `Try:`,
        `  curl -s ${market}/capabilities/compact -H 'x-api-key: ${key}'`,
        `  curl -s -X POST ${market}/suppliers/search -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"state":"Zacatecas","scian_codes":["212"],"limit":3}'`,
        `  curl -s ${market}/coverage -H 'x-api-key: ${key}'`,
        ``
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(
    Effect.provide(Server.layer({ port, host }).pipe(Layer.provideMerge(prepared), Layer.provideMerge(services)))
  )
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
