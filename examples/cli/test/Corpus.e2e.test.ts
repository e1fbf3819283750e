/**
 * `service corpus ...` as an operator runs it: the binary in its own process on an embedded database in a
 * temporary SERVICE_DATA_DIR (DATABASE_URL is left out of its environment on purpose: the corpus commands
 * would otherwise write to that server's database).
 */
import { assert, describe, it } from "@effect/vitest"
import * as DataFiles from "@service/market-warehouse/DataFiles"
import * as Effect from "effect/Effect"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { service } from "./support/Service.js"

const data = (path: string) => DataFiles.path(path)

describe("service corpus", () => {
  it.live("status is read-only: on a data folder with no database it says so and creates nothing", () =>
    Effect.gen(function*() {
      const dir = join(mkdtempSync(join(tmpdir(), "corpus-cli-")), "never-created")
      const status = yield* service(["corpus", "status"], dir)
      assert.notStrictEqual(status.code, 0)
      assert.include(status.stderr, "No embedded database")
      assert.notInclude(status.stderr, "    at ")
      assert.isFalse(existsSync(dir))
    }))

  it.live("loads files with a report, publishes, shows status, and generates a synthetic corpus", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "corpus-cli-"))
      const load = yield* service([
        "corpus", "load", "sat69b",
        data("risks/sat_69b_desvirtuados_2026-01-31_sample.csv"),
        data("risks/sat_69b_definitivos_2026-01-31_sample.csv"),
        "--json"
      ], dir)
      assert.strictEqual(load.code, 0, load.stderr)
      const report: unknown = JSON.parse(load.stdout)
      assert.isTrue(typeof report === "object" && report !== null && "reports" in report && Array.isArray(report.reports))
      const reports = typeof report === "object" && report !== null && "reports" in report && Array.isArray(report.reports)
        ? report.reports
        : []
      assert.deepInclude(reports[0], { accepted: 176, rejected: 0, retrievedOn: "2026-01-31" })
      assert.deepInclude(reports[1], { accepted: 2560, rejected: 40 })
      // Progress and the per-file summary go to stderr, results to stdout.
      assert.include(load.stderr, "sat_69b_definitivos_2026-01-31_sample.csv  2560 accepted, 40 rejected")

      const unpublished = yield* service(["corpus", "status"], dir)
      assert.strictEqual(unpublished.code, 0, unpublished.stderr)
      assert.match(unpublished.stdout, /loading/)
      assert.match(unpublished.stdout, /risk_mark\s+sat_69b\s+2736/)
      assert.match(unpublished.stdout, /reject sat_69b_definitivos_2026-01-31_sample\.csv:\d+ /)

      const publish = yield* service(["corpus", "publish", "--fresh-for-days", "30"], dir)
      assert.strictEqual(publish.code, 0, publish.stderr)
      assert.match(publish.stdout, /^published snap_/)

      const nothing = yield* service(["corpus", "publish"], dir)
      assert.strictEqual(nothing.code, 2)
      assert.include(nothing.stderr, "no loading snapshot")

      const generated = yield* service(["corpus", "generate", "--scale", "0.0005", "--seed", "7", "--publish"], dir)
      assert.strictEqual(generated.code, 0, generated.stderr)
      assert.match(generated.stdout, /award\s+1,000/)
      assert.match(generated.stdout, /published at/)
    }), { timeout: 0 })
})
