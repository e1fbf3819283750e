import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/**
 * One entry of a ustar archive.
 *
 * @internal
 */
export interface TarEntry {
  readonly path: string
  readonly type: "file" | "directory"
  readonly mode: number
  readonly data: Uint8Array
}

const BLOCK = 512

const text = (block: Uint8Array, start: number, length: number): string => {
  const field = block.subarray(start, start + length)
  const end = field.indexOf(0)
  return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end))
}

const octal = (block: Uint8Array, start: number, length: number): number => {
  const value = text(block, start, length).trim()
  return value.length === 0 ? 0 : Number.parseInt(value, 8)
}

/**
 * Reads the files and folders of an uncompressed ustar archive (the format PGlite's `dumpDataDir` writes).
 * Other entry kinds (links, devices) are refused: a database folder holds none.
 *
 * @internal
 */
export const readTar = (archive: Uint8Array): ReadonlyArray<TarEntry> => {
  const entries: Array<TarEntry> = []
  let offset = 0
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK)
    // Two zero blocks end the archive; one is enough to stop reading.
    if (header.every((byte) => byte === 0)) break
    const name = text(header, 0, 100)
    const prefix = text(header, 345, 155)
    const size = octal(header, 124, 12)
    const typeFlag = String.fromCharCode(header[156] ?? 0)
    const path = prefix.length > 0 ? `${prefix}/${name}` : name
    const start = offset + BLOCK
    if (start + size > archive.length) throw new Error(`truncated archive at ${path}`)
    if (typeFlag === "5") {
      entries.push({ path, type: "directory", mode: octal(header, 100, 8), data: new Uint8Array() })
    } else if (typeFlag === "0" || typeFlag === "\0") {
      entries.push({ path, type: "file", mode: octal(header, 100, 8), data: archive.subarray(start, start + size) })
    } else {
      throw new Error(`unsupported entry type "${typeFlag}" for ${path}`)
    }
    offset = start + Math.ceil(size / BLOCK) * BLOCK
  }
  return entries
}

/**
 * Writes the entries under `directory`. Absolute names (PGlite writes `/base/1/...`) are taken relative to
 * it, and a name that would climb out of it is refused.
 *
 * @internal
 */
export const extractTar = async (archive: Uint8Array, directory: string): Promise<number> => {
  const root = NodePath.resolve(directory)
  const entries = readTar(archive)
  await NodeFs.mkdir(root, { recursive: true })
  for (const entry of entries) {
    const target = NodePath.resolve(root, `.${NodePath.posix.sep}${entry.path.replace(/^\/+/, "")}`)
    if (target !== root && !target.startsWith(`${root}${NodePath.sep}`)) throw new Error(`entry outside the folder: ${entry.path}`)
    if (entry.type === "directory") {
      await NodeFs.mkdir(target, { recursive: true, mode: entry.mode || 0o700 })
    } else {
      await NodeFs.mkdir(NodePath.dirname(target), { recursive: true })
      await NodeFs.writeFile(target, entry.data, { mode: entry.mode || 0o600 })
    }
  }
  return entries.length
}
