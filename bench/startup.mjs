#!/usr/bin/env node
// Start-up time and memory of `npm start`, of the stdio MCP server and of a `service` CLI call, as ratios to bare
// node baselines measured in the same run, from the bundles `npm install` builds (build/runtimes, decision 0082) and,
// for comparison, from the TypeScript sources through tsx as before.
// Usage: node bench/startup.mjs [runs=3] [sections=http,stdio,cli] (e.g. `node bench/startup.mjs 3 stdio`)
//
// HTTP: each run starts the command and polls three URLs: GET /health (the process answers), GET /openapi.json
// (the API is served: database open and migrated) and GET /ready (200 once a corpus publication is active).
// Resident memory is the sum over the process tree (npm and node) from /proc, read when /ready turns 200.
// "cold" starts on an empty data folder (database created, migrations, demo corpus); "warm" restarts on the folder the
// cold run left; the "from sources" rows run `node --import tsx examples/server/src/main.ts`. The baseline is a bare
// node:http server started the same way.
// stdio MCP: time from spawning `node examples/mcp-stdio/bin/mcp-stdio.mjs` (or the source through tsx) until its
// answer to an `initialize` request written at once, and until its answer to the `tools/list` written right behind it
// (after `notifications/initialized`; the first request that needs the database), cold (empty folder) and warm; the
// baseline is a bare node process that answers the first stdin line.
// CLI: time until `service --help` exits (the bundle, then the source through tsx); the baseline is `node -e 0`.
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const runs = Number(process.argv[2] ?? 3)
const sections = new Set((process.argv[3] ?? "http,stdio,cli").split(","))
const root = new URL("..", import.meta.url).pathname
const deadlineMs = 300_000

const children = (pid) => {
  const out = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid === pid) out.push(Number(entry))
    } catch {}
  }
  return out
}
const treeRssMb = (pid) => {
  let kb = 0
  const stack = [pid]
  while (stack.length > 0) {
    const p = stack.pop()
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))
      if (m) kb += Number(m[1])
    } catch {}
    stack.push(...children(p))
  }
  return kb / 1024
}

const answers = async (url) => {
  try {
    return (await fetch(url)).status === 200
  } catch {
    return false
  }
}

const stop = (child) =>
  new Promise((resolve) => {
    child.once("exit", resolve)
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {
      resolve()
    }
  })

// Polls each path until it answers 200 and records when; RSS is read once the last one answers.
const measureHttp = async (command, args, env, paths) => {
  const port = 20000 + Math.floor(Math.random() * 20000)
  const started = performance.now()
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env, PORT: String(port) }, stdio: "ignore", detached: true })
  const times = {}
  try {
    for (const [name, path] of Object.entries(paths)) {
      while (!(await answers(`http://127.0.0.1:${port}${path}`))) {
        if (performance.now() - started > deadlineMs) throw new Error(`${command} ${args.join(" ")}: ${path} did not answer`)
        if (child.exitCode !== null) throw new Error(`${command} ${args.join(" ")} exited with ${child.exitCode}`)
        await new Promise((r) => setTimeout(r, 25))
      }
      times[name] = performance.now() - started
    }
    await new Promise((r) => setTimeout(r, 300))
    return { ...times, rss: treeRssMb(child.pid) }
  } finally {
    await stop(child)
  }
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
})

const opening = [
  initialize,
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
].map((line) => `${line}\n`).join("")

// `answersOnce`: the bare baseline answers one line, so its tools/list time is its initialize time.
const measureStdio = (command, args, env, { answersOnce = false } = {}) =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "ignore"], detached: true })
    const timer = setTimeout(() => {
      stop(child)
      reject(new Error(`${command} ${args.join(" ")} did not answer initialize`))
    }, deadlineMs)
    let out = ""
    const times = {}
    child.stdout.on("data", (chunk) => {
      out += chunk
      if (times.initialize === undefined && out.includes('"id":1')) {
        times.initialize = performance.now() - started
        times.rss = treeRssMb(child.pid)
      }
      if (times.initialize !== undefined && times.tools === undefined && (answersOnce || out.includes('"id":2'))) {
        times.tools = performance.now() - started
        clearTimeout(timer)
        stop(child).then(() => resolve(times))
      }
    })
    child.on("error", reject)
    child.stdin.write(opening)
  })

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const pause = () => new Promise((r) => setTimeout(r, 1000))

const http = {
  baseline: [],
  cold: [],
  warm: [],
  "cold, no demo seed (SERVICE_DEMO_SEED=0)": [],
  "cold, from sources (tsx)": [],
  "warm, from sources (tsx)": []
}
const stdio = { baseline: [], cold: [], warm: [], "cold, from sources (tsx)": [], "warm, from sources (tsx)": [] }
const cli = {
  baseline: [],
  "service --help": [],
  "service --help, from sources (tsx)": [],
  "service market suppliers search (server running)": [],
  "service market suppliers search, from sources (tsx)": []
}
const sources = ["--conditions=@service/source", "--import", "tsx", "examples/server/src/main.ts"]
const stdioSources = ["--conditions=@service/source", "--import", "tsx", "examples/mcp-stdio/src/main.ts"]
const stdioBuilt = ["examples/mcp-stdio/bin/mcp-stdio.mjs"]
const timed = (args, env = {}) => {
  const started = performance.now()
  const result = spawnSync("node", args, { cwd: root, env: { ...process.env, ...env }, stdio: "ignore" })
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${result.status}`)
  return { exit: performance.now() - started }
}
// The bundles are built before anything is timed (npm install does it; this only checks).
timed(["scripts/runtimes.mjs"])
const server = { DATABASE_URL: "" }
const stdioEnv = { SERVICE_API_KEY: "svc_key_bench_startup_0123456789abcdef", SERVICE_BOOTSTRAP_DEMO: "1", DATABASE_URL: "" }
const baselineHttp = "require('node:http').createServer((q, s) => s.end('ok')).listen(process.env.PORT, '127.0.0.1')"
const baselineStdio = "process.stdin.once('data', () => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }) + '\\n'))"
const all = { health: "/health", api: "/openapi.json", ready: "/ready" }

for (let i = 0; i < runs; i++) {
  if (sections.has("http")) {
    const first = await measureHttp("node", ["-e", baselineHttp], {}, { health: "/" })
    http.baseline.push({ ...first, api: first.health, ready: first.health })
    for (const [cold, warm, command, args] of [
      ["cold", "warm", "npm", ["start", "--silent"]],
      ["cold, from sources (tsx)", "warm, from sources (tsx)", "node", sources]
    ]) {
      const data = mkdtempSync(join(tmpdir(), "bench-start-"))
      http[cold].push(await measureHttp(command, args, { ...server, SERVICE_DATA_DIR: data }, all))
      await pause()
      http[warm].push(await measureHttp(command, args, { ...server, SERVICE_DATA_DIR: data }, all))
      await pause()
      rmSync(data, { recursive: true, force: true })
    }
    const unseeded = mkdtempSync(join(tmpdir(), "bench-start-"))
    http["cold, no demo seed (SERVICE_DEMO_SEED=0)"].push(
      await measureHttp("npm", ["start", "--silent"], { ...server, SERVICE_DATA_DIR: unseeded, SERVICE_DEMO_SEED: "0" }, all)
    )
    await pause()
    rmSync(unseeded, { recursive: true, force: true })
  }

  if (sections.has("stdio")) {
    stdio.baseline.push(await measureStdio("node", ["-e", baselineStdio], {}, { answersOnce: true }))
    for (const [cold, warm, args] of [["cold", "warm", stdioBuilt], ["cold, from sources (tsx)", "warm, from sources (tsx)", stdioSources]]) {
      const stdioData = mkdtempSync(join(tmpdir(), "bench-stdio-"))
      stdio[cold].push(await measureStdio("node", args, { ...stdioEnv, SERVICE_DATA_DIR: stdioData }))
      await pause()
      stdio[warm].push(await measureStdio("node", args, { ...stdioEnv, SERVICE_DATA_DIR: stdioData }))
      await pause()
      rmSync(stdioData, { recursive: true, force: true })
    }
  }

  if (sections.has("cli")) {
    cli.baseline.push(timed(["-e", "0"]))
    cli["service --help"].push(timed(["examples/cli/bin/service.js", "--help"]))
    cli["service --help, from sources (tsx)"].push(timed(["examples/cli/bin/service.js", "--help"], { SERVICE_RUN_FROM_SOURCES: "1" }))
    // A real call: one supplier search against a server started from the bundle (its demo key from the data folder).
    const callData = mkdtempSync(join(tmpdir(), "bench-cli-"))
    const port = 20000 + Math.floor(Math.random() * 20000)
    const running = spawn("node", ["examples/server/bin/server.mjs"], {
      cwd: root,
      env: { ...process.env, ...server, SERVICE_DATA_DIR: callData, PORT: String(port) },
      stdio: "ignore",
      detached: true
    })
    while (!(await answers(`http://127.0.0.1:${port}/ready`))) await new Promise((r) => setTimeout(r, 100))
    const key = readFileSync(join(callData, "demo-api-key"), "utf8").trim()
    const call = ["examples/cli/bin/service.js", "--base-url", `http://127.0.0.1:${port}`, "--api-key", key, "--workspace", "demo", "market", "suppliers", "search", "--state", "Puebla", "--limit", "5"]
    timed(call) // the server's first request (warming its caches) is not the CLI's cost
    cli["service market suppliers search (server running)"].push(timed(call))
    cli["service market suppliers search, from sources (tsx)"].push(timed(call, { SERVICE_RUN_FROM_SOURCES: "1" }))
    await stop(running)
    rmSync(callData, { recursive: true, force: true })
  }
}

const ms = (x) => `${Math.round(x).toLocaleString("en-US")} ms`
const ratio = (x, base) => `${(x / base).toFixed(1)}x`
const pick = (list, key) => median(list.map((r) => r[key]))
console.log(`runs: ${runs} (medians); times from spawn; HTTP RSS of the process tree when /ready answers 200`)
// One table: a row per variant; time cells as ratios to the baseline's `baseKey` time, and the RSS to its RSS.
const printStartTable = (title, variants, baseKey, timeKeys, rssTitle) => {
  const base = { time: pick(variants.baseline, baseKey), rss: pick(variants.baseline, "rss") }
  console.log("")
  console.log(`| ${title} | ${timeKeys.map(([, heading]) => heading).join(" | ")} | ${rssTitle} |`)
  console.log(`| - | ${timeKeys.map(() => "-").join(" | ")} | - |`)
  for (const [name, list] of Object.entries(variants)) {
    const cell = (key) => `${ms(pick(list, key))} (${ratio(pick(list, key), base.time)})`
    const rss = `${Math.round(pick(list, "rss"))} MB (${ratio(pick(list, "rss"), base.rss)})`
    console.log(`| ${name} | ${timeKeys.map(([key]) => cell(key)).join(" | ")} | ${rss} |`)
  }
}
if (sections.has("http")) {
  printStartTable("HTTP start", http, "health", [["health", "/health answers"], ["api", "/openapi.json (API served)"], ["ready", "/ready 200 (corpus published)"]], "RSS")
}
if (sections.has("stdio")) {
  printStartTable("stdio MCP start", stdio, "initialize", [["initialize", "initialize answered"], ["tools", "tools/list answered (needs the database)"]], "RSS when initialize is answered")
}
if (sections.has("cli")) {
  const cliBase = pick(cli.baseline, "exit")
  console.log("")
  console.log("| CLI call | exits |")
  console.log("| - | - |")
  for (const [name, list] of Object.entries(cli)) console.log(`| ${name} | ${ms(pick(list, "exit"))} (${ratio(pick(list, "exit"), cliBase)}) |`)
}
