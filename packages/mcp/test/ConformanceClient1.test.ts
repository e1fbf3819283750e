import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as App from "@service/app/App"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over MCP with the 1.x (@modelcontextprotocol/sdk, 2025-11-25) client, over every
// group of the application. One file per
// client generation, so each file builds one database per target.
for (const target of TestDatabase.targets()) {
  describe(`${target.name}, client 1.x (@modelcontextprotocol/sdk, 2025-11-25)`, () => {
    Conformance.suite({ surface: "mcp", groups: App.app.groups, harness: harness(target, "1.x") })
  })
}
