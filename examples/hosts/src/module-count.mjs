// `node --import=<this file>`: records every module the process loads, for the hosts' module counts. ES modules are
// seen by a load hook (which runs on the loader thread and appends each URL to <file>.esm); CommonJS modules required
// by CommonJS never pass the ES loader, so the require cache is written to <file>.cjs at exit.
import { writeFileSync } from "node:fs"
import { createRequire, register } from "node:module"

const file = process.env.SERVICE_MODULE_COUNT_FILE
if (file !== undefined && file !== "") {
  register(new URL("./module-count-hooks.mjs", import.meta.url), { data: { file: `${file}.esm` } })
  const require = createRequire(import.meta.url)
  process.on("exit", () => writeFileSync(`${file}.cjs`, Object.keys(require.cache).join("\n")))
}
