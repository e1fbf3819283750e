// Part of `npm run version-packages`, after `changeset version`: the host programs of docs/embedding.md name the
// @service packages by a caret range of the current release (`"@service/client": "^0.1.0"`); a release moves them to
// its own version, so the guide keeps installing what was just released (the check from tarballs installs exactly
// those blocks).
import { readFileSync, writeFileSync } from "node:fs"

const root = new URL("..", import.meta.url)
const { version } = JSON.parse(readFileSync(new URL("packages/core/package.json", root), "utf8"))
const guide = new URL("docs/embedding.md", root)
const before = readFileSync(guide, "utf8")
const after = before.replace(/("@service\/[a-z-]+": )"\^\d+\.\d+\.\d+"/g, `$1"^${version}"`).replace(/\(`\^\d+\.\d+\.\d+`\)/g, `(\`^${version}\`)`)
if (after !== before) writeFileSync(guide, after)
console.log(`docs/embedding.md names the @service packages at ^${version}`)
