/**
 * What an MCP agent pays before and during its first search: the size of `tools/list` per credential, the
 * client-side time to list the tools, and the size of a 10-row `search_suppliers` result.
 *
 *   npx tsx bench/mcp-size.ts [--runs 5]      (in-memory PGlite; loads the demo corpus, about 20-40 s)
 *   npx tsx bench/mcp-size.ts --url http://127.0.0.1:3000 --key "$(cat .data/demo-api-key)"
 *                                              (against a running server, `npm start`, with its demo key only)
 *
 * Starts the HTTP host in process on a free port (`Server.layer` over every bundle of `App.app`), creates the demo
 * workspace with its owner key and a read-only key (`market_data:read`, the stdio bootstrap key's scope), and
 * connects the official 1.x client (`@modelcontextprotocol/sdk`) over streamable HTTP with each. Sizes are the
 * characters of the JSON the client received (`JSON.stringify` of the result). The listing time is the median
 * of `--runs` `listTools` calls by a fresh client each (a fresh client compiles the output-schema validators
 * again), reported against the same measure on a one-tool MCP server in the same process (the baseline).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as NodeHttp from "node:http"

const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1] : undefined
}
const runs = Number(argument("--runs") ?? "5")
const externalUrl = argument("--url")
const externalKey = argument("--key")

const OWNER_KEY = `svc_key_${randomBytes(32).toString("base64url")}`
const READ_KEY = `svc_key_${randomBytes(32).toString("base64url")}`

const connect = async (url: string, headers: Record<string, string>) => {
  const client = new Client({ name: "mcp-size", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/** Median client-side time of a fresh client's `listTools` (connect excluded). */
const listTime = async (url: string, headers: Record<string, string>) => {
  const times: Array<number> = []
  for (let i = 0; i < runs + 1; i++) {
    const client = await connect(url, headers)
    const started = performance.now()
    await client.listTools()
    // The first call of the process also warms the JIT: not counted.
    if (i > 0) times.push(performance.now() - started)
    await client.close()
  }
  return median(times)
}

/** A one-tool MCP server on a free port (1.x SDK, stateless JSON answers): the listing baseline. */
const baselineServer = async () => {
  const http = NodeHttp.createServer((req, res) => {
    const server = new McpServer({ name: "baseline", version: "0.0.0" })
    server.registerTool("echo", { description: "Echoes its input." }, () => ({ content: [{ type: "text", text: "ok" }] }))
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
    res.on("close", () => void transport.close())
    void server.connect(transport).then(() => transport.handleRequest(req, res))
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const address = http.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const { port } = address
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise<void>((resolve) => http.close(() => resolve())) }
}

const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

/** Prints the sizes and times for `credentials` (label, key) on the MCP endpoint `url`; the first one searches. */
const measure = async (url: string, credentials: ReadonlyArray<readonly [string, string]>) => {
  const searchKey = credentials[0]?.[1] ?? ""
  const baseline = await baselineServer()
  try {
    const lines: Array<string> = []
    for (const [label, key] of credentials) {
      const client = await connect(url, { "x-api-key": key })
      const listed = await client.listTools()
      const chars = JSON.stringify(listed).length
      const outputSchemas = listed.tools.reduce((sum, tool) => sum + (tool.outputSchema === undefined ? 0 : JSON.stringify(tool.outputSchema).length), 0)
      lines.push(`| ${label} | ${listed.tools.length} | ${chars.toLocaleString("en")} | ${outputSchemas.toLocaleString("en")} |`)
      await client.close()
    }
    const instructions = await (async () => {
      const client = await connect(url, { "x-api-key": searchKey })
      const text = client.getInstructions() ?? ""
      await client.close()
      return text
    })()

    const baselineMs = await listTime(baseline.url, {})
    const ownerMs = await listTime(url, { "x-api-key": searchKey })

    const client = await connect(url, { "x-api-key": searchKey })
    await client.listTools()
    const search = await client.callTool({ name: "service_market_search_suppliers", arguments: { state: "Zacatecas", limit: 10 } })
    await client.close()
    const rows = (() => {
      const block = Array.isArray(search.content) ? search.content[0] : undefined
      if (block === undefined || block.type !== "text") return -1
      const parsed: unknown = JSON.parse(block.text)
      return typeof parsed === "object" && parsed !== null && "results" in parsed && Array.isArray(parsed.results) ? parsed.results.length : -1
    })()

    console.log("| credential | tools listed | tools/list characters | of which output schemas |")
    console.log("| - | -: | -: | -: |")
    for (const line of lines) console.log(line)
    console.log("")
    console.log(`server instructions: ${instructions.length.toLocaleString("en")} characters`)
    console.log("")
    console.log(`| listTools, fresh 1.x client (median of ${runs}) | ms | vs baseline |`)
    console.log("| - | -: | -: |")
    console.log(`| baseline: one-tool server | ${baselineMs.toFixed(1)} | 1.00x |`)
    console.log(`| ${credentials[0]?.[0] ?? "key"} | ${ownerMs.toFixed(1)} | ${(ownerMs / baselineMs).toFixed(2)}x |`)
    console.log("")
    // As the client holds it: the characters of every text block, plus the JSON of everything else in the result
    // (structuredContent included when present). `wire` is the JSON of the whole result, texts escaped inside it.
    const blocks = Array.isArray(search.content) ? search.content : []
    const texts = blocks.reduce((sum: number, block) => sum + (block.type === "text" ? block.text.length : 0), 0)
    const rest = JSON.stringify({ ...search, content: blocks.map((block) => (block.type === "text" ? { ...block, text: "" } : block)) }).length
    console.log(`search_suppliers {"state":"Zacatecas","limit":10}: ${rows} rows; ${(texts + rest).toLocaleString("en")} characters in all` +
      ` (text ${texts.toLocaleString("en")}, structuredContent ${search.structuredContent === undefined ? "absent" : `${JSON.stringify(search.structuredContent).length.toLocaleString("en")}`}; wire JSON of the result ${JSON.stringify(search).length.toLocaleString("en")})`)
  } finally {
    await baseline.close()
  }
}

const main = async () => {
  if (externalUrl !== undefined) {
    // A running server (npm start): only the key given, which should be an owner's.
    return measure(`${externalUrl.replace(/\/+$/, "")}/mcp`, [["the given key", externalKey ?? process.env["SERVICE_API_KEY"] ?? ""]])
  }
  const services = App.layer(Database.layerPglite().pipe(Layer.orDie), Crypto.layerTest)
  const rt = ManagedRuntime.make(
    Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(
      Layer.provideMerge(services),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)),
      Layer.orDie
    )
  )
  try {
    const address = await rt.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}/mcp`
    await rt.runPromise(Effect.gen(function*() {
      yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
      const accounts = yield* Accounts.Accounts
      const workspace = yield* accounts.findWorkspaceBySlug(WorkspaceSlug.make("demo"))
      if (Option.isNone(workspace)) return yield* Effect.dieMessage("no demo workspace")
      yield* accounts.issueCredential({
        workspaceId: workspace.value.id,
        kind: "api_key",
        label: "mcp-size read-only",
        scopes: ["market_data:read"],
        secret: Redacted.make(READ_KEY)
      })
      yield* DemoLoad.ensureLoaded()
    }).pipe(quiet))

    await measure(url, [["owner key (every scope)", OWNER_KEY], ["read-only key (market_data:read)", READ_KEY]])
  } finally {
    await rt.dispose()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
