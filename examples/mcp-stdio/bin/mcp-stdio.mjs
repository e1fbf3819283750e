#!/usr/bin/env node
// MCP over stdio: examples/mcp-stdio/src/main.ts from its bundle in build/runtimes. A rebuild's progress goes to
// stderr, so stdout carries protocol messages only. See scripts/runtimes.mjs.
import { run } from "../../../scripts/runtimes.mjs"

await run("mcp-stdio")
