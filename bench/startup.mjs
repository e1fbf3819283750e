#!/usr/bin/env node
// Start-up time and memory of `npm start`, as ratios to a bare node:http server measured in the same run.
// Usage: node bench/startup.mjs [runs=3]
// Each run starts the command, polls GET /openapi.json (or / for the baseline) until it answers, then reads the
// resident memory of the whole process tree from /proc. "cold" starts on an empty data folder (migrations and
// demo corpus load); "warm" restarts on the folder the cold run left.
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const runs = Number(process.argv[2] ?? 3)
const root = new URL("..", import.meta.url).pathname

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

const measure = (command, args, env, path) =>
  new Promise((resolve, reject) => {
    const port = 20000 + Math.floor(Math.random() * 20000)
    const started = performance.now()
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env, PORT: String(port) }, stdio: "ignore", detached: true })
    const deadline = started + 180_000
    const poll = async () => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}${path}`)
        if (response.ok) {
          const ms = performance.now() - started
          await new Promise((r) => setTimeout(r, 300))
          const rss = treeRssMb(child.pid)
          process.kill(-child.pid, "SIGTERM")
          return resolve({ ms, rss })
        }
      } catch {}
      if (performance.now() > deadline) {
        process.kill(-child.pid, "SIGKILL")
        return reject(new Error(`${command} did not answer`))
      }
      setTimeout(poll, 50)
    }
    child.on("error", reject)
    poll()
  })

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const rows = { baseline: [], cold: [], warm: [] }
for (let i = 0; i < runs; i++) {
  rows.baseline.push(await measure("node", ["-e", "require('node:http').createServer((q, s) => s.end('ok')).listen(process.env.PORT, '127.0.0.1')"], {}, "/"))
  const data = mkdtempSync(join(tmpdir(), "bench-start-"))
  const env = { SERVICE_DATA_DIR: data, DATABASE_URL: "" }
  rows.cold.push(await measure("npm", ["start", "--silent"], env, "/openapi.json"))
  await new Promise((r) => setTimeout(r, 1000))
  rows.warm.push(await measure("npm", ["start", "--silent"], env, "/openapi.json"))
  await new Promise((r) => setTimeout(r, 1000))
  rmSync(data, { recursive: true, force: true })
}
const base = { ms: median(rows.baseline.map((r) => r.ms)), rss: median(rows.baseline.map((r) => r.rss)) }
console.log(`runs: ${runs} (medians)`)
console.log("| start | time to first answer | ratio to baseline | RSS of process tree | ratio to baseline |")
console.log("| - | - | - | - | - |")
for (const [name, list] of Object.entries(rows)) {
  const ms = median(list.map((r) => r.ms))
  const rss = median(list.map((r) => r.rss))
  console.log(`| ${name} | ${ms.toFixed(0)} ms | ${(ms / base.ms).toFixed(1)}x | ${rss.toFixed(0)} MB | ${(rss / base.rss).toFixed(1)}x |`)
}
