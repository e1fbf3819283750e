/**
 * The `service` binary as an operator runs it: its own process on an embedded database in `dataDir`
 * (SERVICE_DATA_DIR), with DATABASE_URL left out of its environment on purpose (the operator commands would
 * otherwise write to that server's database), and `stdin` piped to it.
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

const binPath = fileURLToPath(new URL("../../bin/service.js", import.meta.url))

/** What a run printed and how it exited. */
export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

// No time limit on a run: on a busy machine a start is slow, not wrong; an interrupted test kills the child.
export const service = (args: ReadonlyArray<string>, dataDir: string, stdin = "") =>
  Effect.async<Ran>((resume) => {
    const child = execFile(
      process.execPath,
      [binPath, ...args],
      { env: { SERVICE_DATA_DIR: dataDir, PATH: process.env["PATH"] ?? "" }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
    child.stdin?.end(stdin)
    return Effect.sync(() => void child.kill())
  })
