import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over the CLI: the application's groups (`App.groups` but the bundles the suite
// does not run yet, `Fixture.pending`) and their twins served over HTTP, and every call made through the
// command line the way a user makes it (`--json`), as on HTTP and MCP. The door's CLI commands are exercised
// by examples/cli's end-to-end tests.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "cli", groups: Fixture.groups, harness: harness(target) })
  })
}
