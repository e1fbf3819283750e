import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as App from "@service/app/App"
import * as TestDatabase from "@service/storage/TestDatabase"
import { harness } from "./support/Harness.js"

// The shared conformance suite over the CLI: every group of the application and their twins served over HTTP,
// and every call made through the command line the way a user makes it (`--json`), as on HTTP and MCP.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "cli", groups: App.app.groups, harness: harness(target) })
  })
}
