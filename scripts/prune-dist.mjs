// Part of `npm run build` and each package's `prepack`, after `tsc -b`: removes from a package's dist/ what no source
// emits any more (a module moved or deleted since the last build), which tsc leaves behind and `npm pack` would ship.
// `node scripts/prune-dist.mjs [package folder …]`; without folders, every package under packages/.
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const outputs = /\.(d\.ts\.map|d\.ts|js\.map|js)$/

const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]
  )

const folders = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(join(root, "packages")).map((name) => join(root, "packages", name))

let removed = 0
for (const folder of folders) {
  const dist = join(folder, "dist")
  if (!existsSync(dist)) continue
  for (const file of filesUnder(dist)) {
    const module = relative(dist, file)
    if (!outputs.test(module)) continue
    if (existsSync(join(folder, "src", module.replace(outputs, ".ts")))) continue
    rmSync(file)
    removed++
  }
}
if (removed > 0) console.log(`prune-dist: removed ${removed} files no source emits`)
