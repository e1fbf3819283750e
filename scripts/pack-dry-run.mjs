// What `npm publish` would upload for each publishable workspace (private ones skipped): its manifest and files.
// `npm pack --dry-run`, not `npm publish --dry-run`: the latter asks the public registry for the versions it holds,
// and an unrelated `@service/*` there refuses the dry run on its version number.
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const { workspaces } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const publishable = workspaces.flatMap((pattern) => {
  const folder = pattern.replace(/\/\*$/, "")
  return readdirSync(join(root, folder)).flatMap((name) => {
    const manifest = JSON.parse(readFileSync(join(root, folder, name, "package.json"), "utf8"))
    return manifest.private === true ? [] : [`--workspace=${manifest.name}`]
  })
})
const run = spawnSync("npm", ["pack", "--dry-run", "--ignore-scripts", ...publishable], { cwd: root, stdio: "inherit" })
process.exit(run.status ?? 1)
