/**
 * A walkthrough of the docs run the way a reader runs it: every `sh` block of the section, in order, typed into a
 * shell (bash) that stays open between blocks, in a folder that looks like the repository root (its `examples/`, and
 * the `.data/` of the server `npm start` started there). Nothing is added to a command line. What the test does in
 * the reader's place:
 *
 * - it starts the server (`npm start`'s program, with the variables a block puts before `npm start`) on a free port,
 *   and the doc's `http://127.0.0.1:3000` (or `localhost:3000`) is that port; the CLI's default server
 *   (`http://localhost:3000`) is `http://localhost:<port>`, given as `SERVICE_BASE_URL`, so a command without
 *   `--base-url` still reaches a loopback name the login did not use, as the reader's does;
 * - a receiver's `127.0.0.1:4000` is another free port, given to the receiver as `RECEIVER_PORT`;
 * - the person's part in a browser: each device-grant link a command prints is opened in headless Chromium;
 * - `^C` in a block's printed output is Ctrl-C for that terminal's command.
 *
 * A block runs in the terminal its info string names (```` ```sh terminal-2 ````), else the first. What the doc says
 * a block prints (its `# ` lines right after a command, or the `text` block after it) must appear in that terminal's
 * output, in order: `…` stands for anything, and ids, secrets, numbers and runs of spaces for any of their kind. A
 * command that fails (bash's ERR trap) fails the walkthrough unless the block's printed output shows a refusal.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import * as NodeNet from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const repositoryRoot = fileURLToPath(new URL("../../../../", import.meta.url))

/** A fenced block of the section: its language, the terminal it belongs to, its text. */
export interface Block {
  readonly language: "sh" | "text"
  readonly terminal: string | undefined
  readonly text: string
}

/** The `sh` and `text` blocks of the section whose `## ` heading starts with `heading`, up to the next `## `. */
export const sectionBlocks = (markdown: string, heading: string): ReadonlyArray<Block> => {
  const section = markdown.split(/\n(?=## )/).find((part) => part.startsWith(`## ${heading}`))
  if (section === undefined) throw new Error(`no section "## ${heading}"`)
  const blocks: Array<Block> = []
  for (const match of section.matchAll(/^```(\w+)(?: +(\S+))?\n([\s\S]*?)^```$/gm)) {
    const language = match[1]
    if (language !== "sh" && language !== "text") continue
    blocks.push({ language, terminal: match[2], text: match[3] ?? "" })
  }
  return blocks
}

/** The lines a block says it prints: its `# ` lines right after a command (or after another such line). */
export const printedLines = (script: string): ReadonlyArray<string> => {
  const printed: Array<string> = []
  let afterCommand = false
  for (const line of script.split("\n")) {
    if (line.startsWith("#")) {
      if (afterCommand) printed.push(line.replace(/^# ?/, ""))
    } else {
      afterCommand = line.trim() !== ""
    }
  }
  return printed
}

// What stands for "any of its kind" in a printed line, before the rest is taken literally.
const wildcards: ReadonlyArray<readonly [RegExp, string]> = [
  [/…/, "[\\s\\S]*?"],
  [/svc_key_[A-Za-z0-9_-]+/, "svc_key_[A-Za-z0-9_-]+"],
  [/whsec_[A-Za-z0-9+/=]+/, "whsec_[A-Za-z0-9+/=]+"],
  [/[a-z]+_(?:[0-9a-f]{32}|[0-9a-f]{24})/, "[a-z]+_(?:[0-9a-f]{32}|[0-9a-f]{24})"],
  [/[A-Z]{4}-[A-Z]{4}/, "[A-Z]{4}-[A-Z]{4}"],
  [/\d+/, "\\d+"]
]
const anyWildcard = new RegExp(wildcards.map(([pattern]) => pattern.source).join("|"), "g")

/**
 * A printed line as a pattern of the output with its white space taken out (so a table's columns, or JSON printed
 * on one line or indented, match whatever their spacing).
 */
export const linePattern = (line: string): RegExp => {
  const squeezed = line.replace(/\s+/g, "")
  let source = ""
  let at = 0
  for (const match of squeezed.matchAll(anyWildcard)) {
    source += escape(squeezed.slice(at, match.index))
    source += wildcards.find(([pattern]) => new RegExp(`^(?:${pattern.source})$`).test(match[0]))?.[1] ?? escape(match[0])
    at = match.index + match[0].length
  }
  return new RegExp(source + escape(squeezed.slice(at)))
}
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Where the printed lines are found in `output`, in order, from `from`: the end of the last, or the first missing. */
export const findInOrder = (output: string, lines: ReadonlyArray<string>, from = 0): { readonly end: number } | { readonly missing: string } => {
  // The output without white space, and where each of its characters was.
  let text = ""
  const raw: Array<number> = []
  for (let i = 0; i < output.length; i++) {
    const char = output[i] ?? ""
    if (/\s/.test(char)) continue
    text += char
    raw.push(i)
  }
  let at = raw.findIndex((position) => position >= from)
  if (at < 0) at = text.length
  for (const line of lines) {
    if (line.trim() === "" || line.trim() === "…" || line.trim() === "^C") continue
    const pattern = new RegExp(linePattern(line).source, "g")
    pattern.lastIndex = at
    const found = pattern.exec(text)
    if (found === null) return { missing: line }
    at = found.index + found[0].length
  }
  return { end: at === 0 ? from : (raw[at - 1] ?? output.length - 1) + 1 }
}

const hangGuardMinutes = 5

/** A line that starts the server, with the variables put before it (`SERVICE_X=true npm start`). */
const npmStart = /^(\w+=\S+\s+)*npm start\s*$/

/** A text block's lines up to its `^C`, if it has one. */
const beforeInterrupt = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  const interrupt = lines.findIndex((line) => line.trim() === "^C")
  return interrupt < 0 ? lines : lines.slice(0, interrupt)
}

/** A process with its output (stdout and stderr, as they came) collected; waits without time limits. */
class Process {
  output = ""
  readonly exited: Promise<number | null>
  private readonly waiters = new Set<() => void>()

  constructor(readonly child: ChildProcess, private readonly onOutput: (process: Process) => void = () => {}) {
    const take = (chunk: Buffer) => {
      this.output += chunk.toString("utf8")
      this.onOutput(this)
      for (const waiter of [...this.waiters]) waiter()
    }
    child.stdout?.on("data", take)
    child.stderr?.on("data", take)
    this.exited = new Promise((resolve) =>
      child.once("close", (code) => {
        resolve(code)
        for (const waiter of [...this.waiters]) waiter()
      })
    )
  }

  /** Until `test` answers something, checked whenever output comes; fails if the process ends first. */
  until<A>(test: () => A | undefined, what: string): Promise<A> {
    return new Promise((resolve, reject) => {
      // A hang guard only (minutes): a busy machine is slow, not wrong; a hang names what never came.
      const guard = setTimeout(() => {
        this.waiters.delete(check)
        reject(new Error(`still waiting after ${hangGuardMinutes} minutes for ${what}`))
      }, hangGuardMinutes * 60_000)
      const check = () => {
        const answer = test()
        if (answer !== undefined) {
          this.waiters.delete(check)
          clearTimeout(guard)
          return resolve(answer)
        }
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          this.waiters.delete(check)
          clearTimeout(guard)
          reject(new Error(`ended before ${what}:\n${this.output}`))
        }
      }
      this.waiters.add(check)
      check()
    })
  }

  signal(signal: NodeJS.Signals) {
    // The whole process group: the shell and the command it is running, as a terminal's Ctrl-C does.
    if (this.child.pid !== undefined && this.child.exitCode === null) {
      try {
        process.kill(-this.child.pid, signal)
      } catch {
        // Already gone.
      }
    }
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = NodeNet.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface Options {
  /** The person's part of a device grant: open `link`, sign in, consent. `dataDir` is the server's `.data`. */
  readonly approve: (link: string, dataDir: string) => Promise<void>
  /**
   * Commands that read what the workers do a moment later ("within a moment"): when their printed output has not
   * appeared yet, the block is typed again, as a reader would, until it has.
   */
  readonly settles?: ReadonlyArray<string>
}

export interface Report {
  /** Each terminal's whole output, and the server's. */
  readonly terminals: ReadonlyMap<string, string>
  readonly server: string
}

/**
 * Runs the blocks; resolves with what every terminal printed, or rejects naming the block and the line that did not
 * appear. `close` stops the terminals and the server and removes the folder.
 */
export const runWalkthrough = async (blocks: ReadonlyArray<Block>, options: Options): Promise<Report & { readonly close: () => Promise<void> }> => {
  const folder = mkdtempSync(join(tmpdir(), "service-walkthrough-"))
  symlinkSync(join(repositoryRoot, "examples"), join(folder, "examples"))
  const home = join(folder, "home")
  mkdirSync(home)
  const dataDir = join(folder, ".data")
  const serverPort = await freePort()
  const receiverPort = await freePort()
  const base = `http://127.0.0.1:${serverPort}`

  // `npm start` with the variables a block puts before it (the first such block's; else none).
  const startLine = blocks.flatMap((block) => block.language === "sh" ? block.text.split("\n") : []).find((line) => npmStart.test(line.trim()))
  const serverEnv = Object.fromEntries([...(startLine ?? "").matchAll(/(\w+)=(\S+)\s+/g)].map((match) => [match[1] ?? "", match[2] ?? ""]))
  const inherited = { ...process.env }
  for (const name of Object.keys(inherited)) if (name.startsWith("SERVICE_") || name.startsWith("DATABASE_") || name === "PORT" || name === "HOST") delete inherited[name]
  const server = new Process(
    spawn(process.execPath, [join(repositoryRoot, "examples/server/bin/server.mjs")], {
      cwd: folder,
      env: { ...inherited, ...serverEnv, PORT: String(serverPort), HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
  )
  const terminals = new Map<string, Process>()
  const close = async () => {
    for (const terminal of terminals.values()) terminal.signal("SIGKILL")
    server.signal("SIGTERM")
    await server.exited
    rmSync(folder, { recursive: true, force: true })
  }
  const report = (): Report => ({ terminals: new Map([...terminals].map(([name, terminal]) => [name, terminal.output])), server: server.output })

  try {
    await server.until(() => /service is listening on http/.test(server.output) ? true : undefined, "the server listened")

    const approved = new Set<string>()
    const approvals: Array<Promise<void>> = []
    const watch = (terminal: Process) => {
      for (const match of terminal.output.matchAll(/open (http\S+\/oauth\/device\?user_code=\S+)/g)) {
        const link = match[1] ?? ""
        if (approved.has(link)) continue
        approved.add(link)
        approvals.push(options.approve(link, dataDir))
      }
    }
    const terminal = (name: string) => {
      const existing = terminals.get(name)
      if (existing !== undefined) return existing
      const shell = new Process(
        spawn("bash", ["--noprofile", "--norc"], {
          cwd: folder,
          env: {
            PATH: process.env["PATH"] ?? "",
            HOME: home,
            LANG: "C.UTF-8",
            SERVICE_BASE_URL: `http://localhost:${serverPort}`,
            RECEIVER_PORT: String(receiverPort)
          },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true
        }),
        watch
      )
      // A terminal: errors go where output goes, aliases work, Ctrl-C stops the command and not the shell, and a
      // failed command is reported (not hidden by the next one).
      shell.child.stdin?.write("exec 2>&1; shopt -s expand_aliases; set -o pipefail; trap ':' INT; trap 'echo \"__FAILED__ $BASH_COMMAND\"' ERR\n")
      terminals.set(name, shell)
      return shell
    }

    const firstTerminal = blocks.find((block) => block.language === "sh")?.terminal ?? "terminal-1"
    let counter = 0
    let lastTerminal = firstTerminal
    const checked = new Map<string, number>()
    for (const [index, block] of blocks.entries()) {
      const name = block.terminal ?? (block.language === "sh" ? firstTerminal : lastTerminal)
      if (block.language === "text") {
        // Printed output of the block before: the server's when that block was `npm start`.
        const isServer = startLine !== undefined && blocks[index - 1]?.text.includes("npm start") === true
        const source = isServer ? server : terminal(name)
        const lines = block.text.split("\n")
        const before = beforeInterrupt(block.text)
        const interrupted = before.length < lines.length
        const from = isServer ? 0 : checked.get(name) ?? 0
        const end = await source.until(() => {
          const found = findInOrder(source.output, before, from)
          return "end" in found ? found.end : undefined
        }, `the text block ${index} printed:\n${block.text}`)
        if (!isServer) checked.set(name, end)
        if (interrupted) {
          source.signal("SIGINT")
          const after = lines.slice(before.length + 1)
          const stopped = await source.until(() => {
            const found = findInOrder(source.output, after, end)
            return "end" in found ? found.end : undefined
          }, `the text block ${index} printed after Ctrl-C:\n${block.text}`)
          checked.set(name, stopped)
        }
        continue
      }
      lastTerminal = name
      const script = block.text.split("\n").filter((line) => !npmStart.test(line.trim())).join("\n")
        .replaceAll("http://127.0.0.1:3000", base)
        .replaceAll("http://localhost:3000", `http://localhost:${serverPort}`)
        .replaceAll("127.0.0.1:4000", `127.0.0.1:${receiverPort}`)
      if (script.trim() === "") continue
      const printed = printedLines(block.text)
      const shell = terminal(name)
      const settles = (options.settles ?? []).some((command) => block.text.includes(command))
      // The output the next block shows, when it is this terminal's: a block whose last command keeps running (a
      // listener) is done once that has appeared, as a reader moves on to the next terminal then.
      const next = blocks[index + 1]
      const shownNext = next?.language === "text" && (next.terminal ?? name) === name ? beforeInterrupt(next.text) : undefined
      const firstTyped = Date.now()
      for (;;) {
        const start = shell.output.length
        const marker = `__DONE_${counter++}__`
        shell.child.stdin?.write(`${script}\necho ${marker}\n`)
        const ended = await shell.until(() => {
          const at = shell.output.indexOf(marker, start)
          if (at >= 0) return { at }
          if (shownNext === undefined) return undefined
          return "end" in findInOrder(shell.output, [...printed, ...shownNext], start) ? { at: -1 } : undefined
        }, `block ${index} finished:\n${script}`)
        if (ended.at < 0) {
          checked.set(name, start)
          break
        }
        const output = shell.output.slice(start, ended.at)
        const found = findInOrder(output, printed)
        // Typed again until it shows what the doc says, within the hang guard (a busy machine is slow, not wrong).
        if ("missing" in found && settles && Date.now() - firstTyped < hangGuardMinutes * 60_000) {
          await new Promise((resolve) => setTimeout(resolve, 500))
          continue
        }
        if ("missing" in found) {
          throw new Error(`block ${index} did not print "${found.missing}" (${linePattern(found.missing)}):\n${script}\n--- it printed:\n${output}`)
        }
        const refusalShown = printed.some((line) => /error|refused|denied/i.test(line))
        if (output.includes("__FAILED__") && !refusalShown) {
          throw new Error(`block ${index} has a command that failed:\n${script}\n--- it printed:\n${output}`)
        }
        // The text block after it shows what this block printed, from its start.
        checked.set(name, next?.language === "text" ? start : start + found.end)
        break
      }
    }
    await Promise.all(approvals)
    return { ...report(), close }
  } catch (error) {
    const printed = [...terminals].map(([name, shell]) => `--- ${name}:\n${shell.output}`).join("\n")
    await close()
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- server:\n${server.output}\n${printed}`)
  }
}
