import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as App from "@service/app/App"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over MCP with the 2.x (@modelcontextprotocol/client, 2026-07-28) client, over every
// group of the application. One file per
// client generation, so each file builds one database per target.
for (const target of TestDatabase.targets()) {
  describe(`${target.name}, client 2.x (@modelcontextprotocol/client, 2026-07-28)`, () => {
    Conformance.suite({ surface: "mcp", groups: App.app.groups, harness: harness(target, "2.x modern") })
  })
}
