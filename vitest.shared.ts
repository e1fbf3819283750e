import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

/**
 * The workspace packages' exports name their TypeScript sources under the `@service/source` condition and their
 * built `dist/` otherwise (what a host installs). Tests run from the sources, so the condition is on here.
 */
export const sourceConditions = {
  resolve: { conditions: ["@service/source", ...defaultClientConditions] },
  ssr: { resolve: { conditions: ["@service/source", ...defaultServerConditions] } }
}

// One place for test defaults; every package merges this.
export default defineConfig({
  ...sourceConditions,
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
