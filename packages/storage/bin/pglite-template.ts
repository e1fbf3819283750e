/**
 * Writes `template/pglite-<version>.tar.br`: a fresh PGlite cluster for the installed PGlite version, which
 * `Database.layerPglite` unpacks instead of running initdb. Run it after upgrading PGlite:
 * `npx tsx packages/storage/bin/pglite-template.ts`.
 */
import * as NodeFs from "node:fs/promises"
import { fileURLToPath } from "node:url"
import * as ClusterTemplate from "../src/internal/clusterTemplate.js"

const directory = fileURLToPath(new URL("../template/", import.meta.url))
const version = ClusterTemplate.installedPgliteVersion()
if (version === undefined) throw new Error("Cannot read the installed PGlite version")
const file = ClusterTemplate.templateFile(directory, version)
await NodeFs.mkdir(directory, { recursive: true })
await NodeFs.writeFile(file, await ClusterTemplate.makeTemplate())
console.log(`Wrote ${file}`)
