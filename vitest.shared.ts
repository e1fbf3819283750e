import { defineConfig } from "vitest/config"

// One place for test defaults; every package merges this.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // PGlite costs 200-700 MB and 2-3 s per instance: keep file parallelism modest on 2 cores.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    fileParallelism: true
  }
})
