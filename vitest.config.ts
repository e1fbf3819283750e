import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*"],
    // One folder per run for the prepared test databases (TestDatabase.prepared).
    globalSetup: ["./vitest.global-setup.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
