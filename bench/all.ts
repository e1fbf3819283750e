// Runs every benchmark in turn and writes what each printed into bench/README.md, between the markers of the
// "Latest full run" section, with the date, the machine and its load. Each script measures its own baseline in the
// same run and prints its ratios; this only sequences them and keeps their output.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/all.ts [--scale 1] [--quick]
//          [--only <name>[,<name>…]] [--database <a corpus kept by corpus-load.ts>] [--no-write]
//
// --quick runs each script with small sizes (minutes in all) to check the pipeline; the figures in the README
// come from a run without it. Without --database the scale corpus is loaded once (corpus-load.ts --keep) and
// dropped at the end.
import { spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { fileURLToPath } from "node:url"
import pg from "pg"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const adminUrl = process.env["DATABASE_URL"]
const scale = option("scale") ?? "1"
const quick = args.includes("--quick")
const only = option("only")?.split(",")
const given = option("database")
const write = !args.includes("--no-write")
if (adminUrl === undefined || adminUrl === "" || !(Number(scale) > 0) || (given !== undefined && !/^[a-z0-9_]+$/.test(given))) {
  console.error("usage: DATABASE_URL=postgres://… npx tsx bench/all.ts [--scale 1] [--quick] [--only name,…] [--database <name>] [--no-write]")
  process.exit(2)
}

const root = fileURLToPath(new URL("..", import.meta.url))
const readme = fileURLToPath(new URL("README.md", import.meta.url))
const BEGIN = "<!-- bench/all.ts: begin -->"
const END = "<!-- bench/all.ts: end -->"

interface Step {
  readonly name: string
  /** The command line after `npx tsx` (or `node` for .mjs). */
  readonly argv: (database: string) => ReadonlyArray<string>
  readonly needsCorpus?: boolean
}

const steps: ReadonlyArray<Step> = [
  {
    name: "operations",
    needsCorpus: true,
    argv: (db) => ["bench/operations.ts", "--database", db, "--iterations", quick ? "5" : "30"]
  },
  {
    name: "profile-read",
    needsCorpus: true,
    argv: (db) => ["bench/profile-read.ts", "--database", db, "--requests", quick ? "300" : "3000"]
  },
  { name: "intake", argv: () => ["bench/intake.ts", ...(quick ? ["--seconds", "3", "--minutes", "0.1", "--arrivals", "300", "--workers", "1,2"] : [])] },
  { name: "delivery", argv: () => ["bench/delivery.ts", ...(quick ? ["--events", "200", "--latency-events", "40", "--retry-events", "10"] : [])] },
  { name: "topics-search", argv: () => ["bench/topics-search.ts", ...(quick ? ["--topics", "2000", "--others", "200", "--iterations", "20"] : [])] },
  { name: "unlock", argv: () => ["bench/unlock.ts", ...(quick ? ["--iterations", "10"] : [])] },
  { name: "door-401", argv: () => ["bench/door-401.ts", ...(quick ? ["--requests", "100"] : [])] },
  { name: "mcp-size", argv: () => ["bench/mcp-size.ts", ...(quick ? ["--runs", "2"] : [])] },
  { name: "envelope-size", argv: () => ["bench/envelope-size.ts"] },
  { name: "startup", argv: () => ["bench/startup.mjs", quick ? "1" : "3"] },
  { name: "hosts", argv: () => ["bench/hosts.ts", "--runs", quick ? "1" : "5"] }
]

/** Runs one command, echoing its output, and resolves with its stdout (stderr is progress, shown only). */
const run = (argv: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; seconds: number }>((resolve, reject) => {
    const started = performance.now()
    const [script] = argv
    const command = script?.endsWith(".mjs") ? process.execPath : "npx"
    const full = script?.endsWith(".mjs") ? [...argv] : ["tsx", "--conditions=@service/source", ...argv]
    const child = spawn(command, full, { cwd: root, env: process.env, stdio: ["ignore", "pipe", "inherit"] })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      process.stdout.write(chunk)
    })
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code: code ?? 1, stdout, seconds: (performance.now() - started) / 1000 }))
  })

// Log lines of the in-process server are not results.
const results = (stdout: string) =>
  stdout.split("\n").filter((line) => !/^timestamp=\S+ level=/.test(line)).join("\n").trim()

const main = async () => {
  const chosen = steps.filter((step) => only === undefined || only.includes(step.name))
  const started = new Date()
  const load = loadavg().map((n) => n.toFixed(1)).join(", ")
  const sections: Array<string> = []
  let database = given
  let loaded: string | undefined
  if (database === undefined && chosen.some((step) => step.needsCorpus === true)) {
    const corpusArgs = ["bench/corpus-load.ts", "--scale", scale, "--keep", ...(quick ? ["--no-baseline"] : [])]
    const corpus = await run(corpusArgs)
    const kept = corpus.stdout.match(/kept database (\S+)/)?.[1]
    if (corpus.code !== 0 || kept === undefined) throw new Error("corpus-load.ts did not keep a database")
    database = kept
    loaded = kept
    sections.push(`### corpus-load (${corpus.seconds.toFixed(0)} s)\n\n\`npx tsx ${corpusArgs.join(" ")}\`\n\n${results(corpus.stdout)}`)
  }
  let failed = 0
  try {
    for (const step of chosen) {
      const argv = step.argv(database ?? "")
      console.error(`\n== ${step.name}: ${argv.join(" ")}`)
      const outcome = await run(argv)
      if (outcome.code !== 0) failed++
      const command = `${argv[0]?.endsWith(".mjs") ? "node" : "npx tsx"} ${argv.join(" ")}`
      sections.push(
        `### ${step.name} (${outcome.seconds.toFixed(0)} s${outcome.code === 0 ? "" : `, exit ${outcome.code}`})\n\n\`${command}\`\n\n${results(outcome.stdout)}`
      )
    }
  } finally {
    if (loaded !== undefined) {
      const admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      await admin.query(`DROP DATABASE IF EXISTS ${loaded} WITH (FORCE)`)
      await admin.end()
    }
  }
  const header = `Run of \`npx tsx bench/all.ts${args.length > 0 ? ` ${args.join(" ")}` : ""}\` started ${started.toISOString()}, ` +
    `${((Date.now() - started.getTime()) / 60_000).toFixed(0)} minutes; ${cpus().length} cores, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GB, load average at the start ${load}.${quick ? " Quick sizes: checks the pipeline, not the figures." : ""}`
  const body = `${BEGIN}\n\n${header}\n\n${sections.join("\n\n")}\n\n${END}`
  if (write) {
    const text = readFileSync(readme, "utf8")
    const from = text.indexOf(BEGIN)
    const to = text.indexOf(END)
    const next = from === -1 || to === -1
      ? `${text.trimEnd()}\n\n## Latest full run (written by bench/all.ts)\n\n${body}\n`
      : `${text.slice(0, from)}${body}${text.slice(to + END.length)}`
    writeFileSync(readme, next)
    console.error(`\nwrote ${chosen.length} sections into bench/README.md`)
  }
  if (failed > 0) process.exit(1)
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
