import { defineConfig } from "vitest/config"
import { sourceConditions } from "./vitest.shared.ts"

export default defineConfig({
  // The global setup imports workspace packages: from their sources, as the projects do.
  ...sourceConditions,
  test: {
    projects: ["packages/*", "examples/*"],
    // One folder per run for the prepared test databases (TestDatabase.prepared).
    globalSetup: ["./vitest.global-setup.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
