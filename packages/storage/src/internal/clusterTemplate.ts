import { PGlite } from "@electric-sql/pglite"
import { createRequire } from "node:module"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as NodeZlib from "node:zlib"
import { promisify } from "node:util"

// A fresh cluster costs PGlite's initdb 5-7 s on a busy 2-core machine; unpacking a prebuilt one costs a
// fraction of a second. Brotli keeps the 40 MB tar (mostly empty pages and WAL zeros) near 1.4 MB.
const brotliDecompress = promisify(NodeZlib.brotliDecompress)
const brotliCompress = promisify(NodeZlib.brotliCompress)

/**
 * The installed PGlite version, or undefined when it cannot be read.
 *
 * @internal
 */
export const installedPgliteVersion = (): string | undefined => {
  try {
    const require = createRequire(import.meta.url)
    const entry = require.resolve("@electric-sql/pglite")
    // dist/index.cjs -> the package folder
    const manifest: unknown = require(NodePath.join(NodePath.dirname(entry), "..", "package.json"))
    return typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string"
      ? manifest.version
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The template file for a PGlite version. A template is only used with the exact version that made it: the
 * on-disk format follows the PostgreSQL build inside PGlite.
 *
 * @internal
 */
export const templateFile = (directory: string, version: string): string =>
  NodePath.join(directory, `pglite-${version}.tar.br`)

/**
 * The uncompressed tar of a fresh cluster for the installed PGlite, or undefined when none ships for it.
 *
 * @internal
 */
export const readTemplate = async (directory: string): Promise<Uint8Array<ArrayBuffer> | undefined> => {
  const version = installedPgliteVersion()
  if (version === undefined) return undefined
  const compressed = await NodeFs.readFile(templateFile(directory, version)).catch(() => undefined)
  return compressed === undefined ? undefined : new Uint8Array(await brotliDecompress(compressed))
}

/**
 * Runs initdb in memory and returns the compressed tar of the fresh cluster, for `bin/pglite-template.ts`.
 *
 * @internal
 */
export const makeTemplate = async (): Promise<Uint8Array> => {
  const pglite = await PGlite.create()
  try {
    const dump = await pglite.dumpDataDir("none")
    const tar = new Uint8Array(await dump.arrayBuffer())
    return new Uint8Array(
      await brotliCompress(tar, {
        params: {
          [NodeZlib.constants.BROTLI_PARAM_QUALITY]: 11,
          [NodeZlib.constants.BROTLI_PARAM_LGWIN]: 24,
          [NodeZlib.constants.BROTLI_PARAM_SIZE_HINT]: tar.length
        }
      })
    )
  } finally {
    await pglite.close()
  }
}
