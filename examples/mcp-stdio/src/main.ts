/**
 * MCP over stdio for local MCP clients (Claude Desktop, Inspector, ...): the application of every bundle
 * (`App.app`) served by `@service/server/McpStdio` for the principal of `SERVICE_API_KEY`, tools and `events/*`
 * alike. See that module for the environment (`SERVICE_BOOTSTRAP_DEMO=1` for a fresh data folder).
 *
 * stdout carries protocol messages only: logs go to stderr. Start it directly (`node bin/mcp-stdio.mjs`, which runs
 * this file's bundle from build/runtimes, decision 0082) or with `npm start --silent`, since `npm start` prints its
 * banner on stdout.
 */
import * as App from "@service/app/App"
import * as McpStdio from "@service/server/McpStdio"

McpStdio.runMain(McpStdio.make(App.app))
