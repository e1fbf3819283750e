import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
