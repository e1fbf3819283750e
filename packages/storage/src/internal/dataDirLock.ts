import { randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"

/**
 * Who holds a data folder's lock.
 *
 * @internal
 */
export interface LockHolder {
  readonly pid: number
  readonly hostname: string
  readonly startedAt: string
  readonly token: string
}

/** @internal */
export type LockAttempt =
  | { readonly _tag: "Acquired"; readonly holder: LockHolder; readonly removedStale: LockHolder | undefined }
  | { readonly _tag: "Held"; readonly holder: LockHolder }

const errorCode = (cause: unknown): unknown => typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined

const parseHolder = (text: string): LockHolder | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== "object" || value === null) return undefined
    const pid = "pid" in value ? value.pid : undefined
    const hostname = "hostname" in value ? value.hostname : undefined
    const startedAt = "startedAt" in value ? value.startedAt : undefined
    const token = "token" in value ? value.token : undefined
    return typeof pid === "number" && typeof hostname === "string" && typeof startedAt === "string" && typeof token === "string"
      ? { pid, hostname, startedAt, token }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the holder may still be running. A lock from another host cannot be checked, so it counts as held;
 * signal 0 tests for a process without touching it (EPERM: it exists but belongs to another user).
 */
const isAlive = (holder: LockHolder): boolean => {
  if (holder.hostname !== NodeOs.hostname()) return true
  try {
    process.kill(holder.pid, 0)
    return true
  } catch (cause) {
    return errorCode(cause) === "EPERM"
  }
}

const readHolder = async (path: string): Promise<{ readonly text: string; readonly holder: LockHolder | undefined } | undefined> => {
  try {
    const text = await NodeFs.readFile(path, "utf8")
    return { text, holder: parseHolder(text) }
  } catch (cause) {
    if (errorCode(cause) === "ENOENT") return undefined
    throw cause
  }
}

/**
 * Takes the lock file at `path` for this process: written under a temporary name and linked into place, so it
 * is never seen half written and `link` refuses to replace a lock someone else holds. A lock whose process is
 * gone (killed, crashed) is stale and replaced.
 *
 * @internal
 */
export const acquire = async (path: string): Promise<LockAttempt> => {
  const holder: LockHolder = {
    pid: process.pid,
    hostname: NodeOs.hostname(),
    startedAt: new Date().toISOString(),
    token: randomUUID()
  }
  let removedStale: LockHolder | undefined
  for (let attempt = 0; attempt < 5; attempt++) {
    const temporary = `${path}.${holder.token}.tmp`
    try {
      await NodeFs.writeFile(temporary, JSON.stringify(holder), { flag: "wx", mode: 0o600 })
      await NodeFs.link(temporary, path)
      return { _tag: "Acquired", holder, removedStale }
    } catch (cause) {
      if (errorCode(cause) !== "EEXIST") throw cause
    } finally {
      await NodeFs.rm(temporary, { force: true })
    }
    const current = await readHolder(path)
    if (current === undefined) continue
    if (current.holder !== undefined && isAlive(current.holder)) return { _tag: "Held", holder: current.holder }
    // Stale (or unreadable). Re-read just before removing, so a lock another starter took meanwhile stays.
    const again = await readHolder(path)
    if (again !== undefined && again.text === current.text) {
      await NodeFs.rm(path, { force: true })
      removedStale = current.holder
    }
  }
  throw new Error(`could not take the lock file ${path}`)
}

/**
 * Removes the lock file if it is still the one `holder` wrote.
 *
 * @internal
 */
export const release = async (path: string, holder: LockHolder): Promise<void> => {
  const current = await readHolder(path)
  if (current?.holder?.token === holder.token) await NodeFs.rm(path, { force: true })
}
