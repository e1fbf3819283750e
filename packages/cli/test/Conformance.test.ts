import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as AccountOperations from "@service/core/AccountOperations"
import * as MarketOperations from "@service/market-contract/Operations"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over the CLI: the market and account groups (and their twins) served over
// HTTP, and every call made through the command line the way a user makes it (`--json`), as on HTTP and MCP.
// The door's groups need a person with a role and a test workspace; their CLI commands are exercised by
// examples/cli's end-to-end tests.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "cli", groups: [MarketOperations.group, AccountOperations.group], harness: harness(target) })
  })
}
