import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over MCP with the 1.x (@modelcontextprotocol/sdk, 2025-11-25) client, over the
// application's groups (`App.groups` but the bundles the suite does not run yet, `Fixture.pending`). One file per
// client generation, so each file builds one database per target.
for (const target of TestDatabase.targets()) {
  describe(`${target.name}, client 1.x (@modelcontextprotocol/sdk, 2025-11-25)`, () => {
    Conformance.suite({ surface: "mcp", groups: Fixture.groups, harness: harness(target, "1.x") })
  })
}
