/**
 * The `service` command line against the example server (what `npm start` runs) listening on a free port over
 * a migrated test database with the demo corpus published.
 *
 * Behaviour is checked in-process (`InProcess.run`: the same tree, calls and exit codes, output captured),
 * on every database engine. The binary itself is spawned only where the process boundary is the point, once:
 * exit codes as a shell sees them, results on stdout and failures on stderr, and no colour in piped output.
 * No test measures or bounds a duration.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as InProcess from "@service/cli/InProcess"
import * as Quotes from "@service/contacts/Quotes"
import * as Unlocks from "@service/contacts/Unlocks"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import * as Leaks from "@service/core/Leaks"
import { Crm } from "@service/crm/Crm"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as MarketOperations from "@service/market-contract/Operations"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { execFile, spawn as spawnChild } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Target, target } from "./support/Target.js"

const API_KEY = "svc_key_cli_e2e_0123456789abcdef"
const binPath = fileURLToPath(new URL("../bin/service.js", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** Exit codes documented in packages/cli/README.md. */
const EXIT = { ok: 0, usage: 2, refused: 3, denied: 4, unreachable: 5 } as const
// eslint-disable-next-line no-control-regex
const ESC = /\u001b/

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Spawns the binary with an explicit environment (nothing from the runner's, such as a developer's
 * SERVICE_API_KEY or FORCE_COLOR, leaks in) and its output piped. No time limit: on a busy machine a start
 * is slow, not wrong; an interrupted test kills the child.
 */
const spawn = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      process.execPath,
      [binPath, ...args],
      { cwd: packageDir, env: { PATH: process.env["PATH"] ?? "", ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
    return Effect.sync(() => void child.kill())
  })

const options = { groups: App.app.groups }

/** Runs the command line in-process, with only `env` visible to Config. */
const service = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  InProcess.run(args, options).pipe(
    Effect.provide(NodeContext.layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

/** The base URL of the server under test. */

const prepared = Layer.effectDiscard(ensureDemo(Option.some(Redacted.make(API_KEY))).pipe(Effect.orDie))

const connection = (baseUrl: string, key: string = API_KEY) => ["--base-url", baseUrl, "--api-key", key]

const parseJson = (text: string): unknown => JSON.parse(text)

/** Reads `results` of an envelope printed by `--json` without trusting its shape. */
const resultsOf = (envelope: unknown): ReadonlyArray<Record<string, unknown>> => {
  if (typeof envelope !== "object" || envelope === null || !("results" in envelope)) return []
  const results: unknown = envelope.results
  return Array.isArray(results)
    ? results.filter((row): row is Record<string, unknown> => typeof row === "object" && row !== null)
    : []
}

// What `contacts quote --json` and `contacts unlock --json` print: the operations' own output schemas.
const QuoteOutput = Schema.parseJson(Quotes.Quote)
const UnlockOutput = Schema.parseJson(Unlocks.Unlock)

/** The balance `account usage --json` prints. */
const UsageOutput = Schema.parseJson(Schema.Struct({ balance: Schema.Number }))

const [first] = TestDatabase.targets()

// The demo corpus is a copy of the run's prepared one (`TestDatabase.prepared`), not loaded again per file.
for (const database of TestDatabase.targets()) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(TestDatabase.prepared(database, DemoSnapshot.over(App.migrations)), Crypto.layerTest)),
    Layer.provideMerge(NodeHttpClient.layerUndici)
  )

  layer(Env, { timeout: "180 seconds", excludeTestServices: true })(`service against the server on ${database.name}`, (it) => {
    it.effect("search --json prints the full envelope with rows", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const run = yield* service([
          ...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--json"
        ])
        assert.strictEqual(run.code, EXIT.ok, run.stderr)
        const envelope = parseJson(run.stdout)
        assert.propertyVal(envelope, "schemaVersion", "market-data/domain/1")
        assert.propertyVal(envelope, "operation", "search_suppliers")
        assert.isAbove(resultsOf(envelope).length, 0)
      }))

    it.effect("search prints a summary that names a row and the next page's command, with settings from the environment", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const json = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "3", "--json"])
        const name = resultsOf(parseJson(json.stdout))[0]?.["name"]
        assert.isString(name)
        const run = yield* service(
          ["market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "3"],
          { SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: API_KEY, SERVICE_WORKSPACE: "demo" }
        )
        assert.strictEqual(run.code, EXIT.ok, run.stderr)
        assert.include(run.stdout, `1. ${String(name)}`)
        const next = /more: yes — next: (service market suppliers search .*--cursor \S+)$/m.exec(run.stdout)?.[1]
        assert.isString(next)
        // The printed command reads the next page as printed.
        const page = yield* service([...connection(baseUrl), ...(next ?? "").split(" ").slice(1), "--json"])
        assert.strictEqual(page.code, EXIT.ok, page.stderr)
        assert.notInclude(page.stdout, `"record_fingerprint": "${String(resultsOf(parseJson(json.stdout))[0]?.["record_fingerprint"])}"`)
      }))

    it.effect("get works with a ref copied from a search", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const search = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "1", "--json"])
        const row = resultsOf(parseJson(search.stdout))[0]
        const ref = row?.["record_ref"]
        assert.isString(ref)
        const json = yield* service([...connection(baseUrl), "market", "suppliers", "get", String(ref), "--json"])
        assert.strictEqual(json.code, EXIT.ok, json.stderr)
        assert.propertyVal(parseJson(json.stdout), "operation", "get_supplier")
        const summary = yield* service([...connection(baseUrl), "market", "suppliers", "get", String(ref)])
        assert.strictEqual(summary.code, EXIT.ok, summary.stderr)
        assert.include(summary.stdout, String(row?.["name"]))
        // A record_ref is fresh per response; the fingerprint is what stays equal.
        assert.include(summary.stdout, `fingerprint: ${String(row?.["record_fingerprint"])}`)
      }))

    it.effect("a tampered ref is refused with invalid_record_ref and the server's status", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const search = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--limit", "1", "--json"])
        const ref = String(resultsOf(parseJson(search.stdout))[0]?.["record_ref"])
        const tampered = `${ref.slice(0, -4)}${ref.endsWith("AAAA") ? "BBBB" : "AAAA"}`
        const run = yield* service([...connection(baseUrl), "market", "suppliers", "get", tampered])
        assert.strictEqual(run.code, EXIT.refused, run.stderr)
        assert.include(run.stderr, "error: market-data refused (HTTP 404")
        assert.include(run.stderr, "semantic_code: invalid_record_ref")
        assert.strictEqual(run.stdout, "")
      }))

    it.effect("door: Sources, Arrivals and a test workspace from the command line", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const created = yield* service([...connection(baseUrl), "door", "sources", "create", "--name", "CLI form", "--json"])
        assert.strictEqual(created.code, EXIT.ok, created.stderr)
        const id = Schema.decodeUnknownSync(Schema.Struct({ source: Schema.Struct({ id: Schema.String }) }))(parseJson(created.stdout)).source.id
        assert.match(id, /^src_[0-9a-f]{24}$/)
        assert.match(created.stdout, /"secret": "whsec_/)

        const shown = yield* service([...connection(baseUrl), "door", "sources", "show", id, "--json"])
        assert.strictEqual(shown.code, EXIT.ok, shown.stderr)
        assert.propertyVal(parseJson(shown.stdout), "name", "CLI form")
        const paused = yield* service([...connection(baseUrl), "door", "sources", "update", id, "--status", "paused", "--json"])
        assert.strictEqual(paused.code, EXIT.ok, paused.stderr)
        assert.propertyVal(parseJson(paused.stdout), "status", "paused")
        const templates = yield* service([...connection(baseUrl), "door", "templates"])
        assert.strictEqual(templates.code, EXIT.ok, templates.stderr)
        assert.include(templates.stdout, "posthog")

        // Test Arrivals only in a test workspace: refused here with the door's code and exit 3.
        const refused = yield* service([...connection(baseUrl), "arrivals", "send-test", id, "--type", "contact.created"])
        assert.strictEqual(refused.code, EXIT.refused, refused.stderr)
        assert.include(refused.stderr, "not_a_test_workspace")

        const sandbox = yield* service([...connection(baseUrl), "sandboxes", "create", "--name", "CLI trial", "--json"])
        assert.strictEqual(sandbox.code, EXIT.ok, sandbox.stderr)
        const made = Schema.decodeUnknownSync(Schema.Struct({
          api_key: Schema.String,
          workspace: Schema.Struct({ slug: Schema.String }),
          sources: Schema.Array(Schema.Struct({ source: Schema.Struct({ id: Schema.String }) }))
        }))(parseJson(sandbox.stdout))
        const key = made.api_key
        const slug = made.workspace.slug
        const copyId = made.sources[0]?.source.id ?? ""
        assert.match(copyId, /^src_/)
        const inTest = ["--base-url", baseUrl, "--api-key", key, "--workspace", slug]
        const sent = yield* service([...inTest, "arrivals", "send-test", copyId, "--type", "contact.created", "--json"])
        assert.strictEqual(sent.code, EXIT.ok, sent.stderr)
        assert.propertyVal(parseJson(sent.stdout), "duplicate", false)
        const listed = yield* service([...inTest, "arrivals", "list", "--source-id", copyId, "--json"])
        assert.strictEqual(listed.code, EXIT.ok, listed.stderr)
        assert.include(listed.stdout, copyId)
      }))

    it.effect("a bad API key is denied", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const run = yield* service([...connection(baseUrl, "svc_key_wrong_0123456789abcdef"), "market", "capabilities"])
        assert.strictEqual(run.code, EXIT.denied, run.stderr)
        assert.include(run.stderr, "HTTP 401")
      }))

    it.effect("beside a local npm start, the demo workspace's kept key is used when none is given; another workspace still needs one", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const dataDir = mkdtempSync(join(tmpdir(), "cli-demo-key-"))
        const none = yield* service(["--base-url", baseUrl, "account", "usage", "--json"], { SERVICE_DATA_DIR: dataDir })
        assert.strictEqual(none.code, EXIT.denied, none.stderr)
        assert.include(none.stderr, "NO_API_KEY")
        writeFileSync(join(dataDir, "demo-api-key"), `${API_KEY}\n`, { mode: 0o600 })
        const kept = yield* service(["--base-url", baseUrl, "account", "usage", "--json"], { SERVICE_DATA_DIR: dataDir })
        assert.strictEqual(kept.code, EXIT.ok, kept.stderr)
        assert.property(parseJson(kept.stdout), "balance")
        const elsewhere = yield* service(["--base-url", baseUrl, "--workspace", "acme", "account", "usage"], { SERVICE_DATA_DIR: dataDir })
        assert.strictEqual(elsewhere.code, EXIT.denied, elsewhere.stderr)
        assert.include(elsewhere.stderr, "NO_API_KEY")
      }))

    it.effect("capabilities prints the operations, as summary and as JSON", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const summary = yield* service([...connection(baseUrl), "market", "capabilities", "--facets", "states"])
        assert.strictEqual(summary.code, EXIT.ok, summary.stderr)
        assert.include(summary.stdout, "search_suppliers  POST /suppliers/search")
        assert.include(summary.stdout, "states:")
        const json = yield* service([...connection(baseUrl), "market", "capabilities", "--json"])
        assert.strictEqual(json.code, EXIT.ok, json.stderr)
        assert.propertyVal(parseJson(json.stdout), "schemaVersion", "market-data/domain/1")
      }))

    it.effect("prints no source identity or contact coordinate, as summary or as JSON", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const scan = yield* forbiddenValues
        const outputs: Array<string> = []
        for (const state of ["CDMX", "Zacatecas", "Sonora"]) {
          for (const format of [["--json"], []]) {
            const run = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", state, "--limit", "50", ...format])
            assert.strictEqual(run.code, EXIT.ok, run.stderr)
            outputs.push(run.stdout, run.stderr)
          }
        }
        const capabilities = yield* service([...connection(baseUrl), "market", "capabilities", "--json"])
        outputs.push(capabilities.stdout)
        assert.isAbove(scan.length, 100)
        // One pass over each output for every value (`Leaks.find`), not one `includes` per value and output.
        assert.deepStrictEqual(Leaks.find(outputs, scan).flat(), [], "an output leaked a source identity or a contact")
      }))

    it.effect("contacts: quote, then unlock with the quote's token and key; the retry spends nothing", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const accounts = yield* Accounts.Accounts
        const crm = yield* Crm
        const demo = yield* accounts.findWorkspaceBySlug("demo").pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage("no demo workspace"), onSome: Effect.succeed }))
        )
        // The quote token is bound to the person behind the key: the activating key is the demo owner's, as the demo key.
        const owner = (yield* accounts.listMembers(demo.id)).find((member) => member.role === "owner")?.person
        if (owner === undefined) return yield* Effect.dieMessage("the demo workspace has no owner")
        const issued = yield* accounts.issueCredential({
          workspaceId: demo.id,
          kind: "api_key",
          label: "cli contacts e2e",
          scopes: ["commercial:read", "commercial:activate"],
          personId: owner.id
        }).pipe(Effect.orDie)
        const activateKey = Redacted.value(issued.secret)
        const suffix = randomBytes(4).toString("hex")
        const contactIds: Array<string> = []
        for (const name of ["ana", "beto", "carla"]) {
          const outcome = yield* crm.applyContact(demo.id, { name, email: `${name}.${suffix}@sur-cli.mx` })
          if (outcome._tag !== "Created") return yield* Effect.dieMessage(`contact ${name} not created: ${outcome._tag}`)
          contactIds.push(outcome.contact.id)
        }
        const collection = yield* crm.createCollection(demo.id, { name: `CLI unlock ${suffix}`, contactIds }).pipe(Effect.orDie)
        const selection = ["--record-ids", contactIds.join(",")]
        const balanceNow = Effect.gen(function*() {
          const usage = yield* service([...connection(baseUrl, activateKey), "account", "usage", "--json"])
          assert.strictEqual(usage.code, EXIT.ok, usage.stderr)
          return Schema.decodeUnknownSync(UsageOutput)(usage.stdout).balance
        })
        const before = yield* balanceNow

        // The quote, free: a price per account, a token and the key of the one unlock it may lead to.
        const quoted = yield* service([...connection(baseUrl, activateKey), "contacts", "quote", collection.id, ...selection, "--json"])
        assert.strictEqual(quoted.code, EXIT.ok, quoted.stderr)
        const quote = Schema.decodeUnknownSync(QuoteOutput)(quoted.stdout)
        assert.strictEqual(quote.collection_id, collection.id)
        assert.sameMembers(quote.accounts.map((a) => a.record_id), contactIds)
        assert.isTrue(quote.accounts.every((a) => !a.already_unlocked && a.credits === quote.credits_per_account))
        assert.isAbove(quote.credits_per_account, 0)
        const total = quote.total_credits
        assert.strictEqual(total, contactIds.length * quote.credits_per_account)
        assert.deepStrictEqual([quote.balance, quote.sufficient], [before, true])
        assert.match(quote.idempotency_key, /^unl_[0-9a-f]{32}$/)
        assert.notInclude(quoted.stdout, "sur-cli.mx")

        // The summary a person reads: the price, and that they must confirm it.
        const summary = yield* service([...connection(baseUrl, activateKey), "contacts", "quote", collection.id, ...selection])
        assert.strictEqual(summary.code, EXIT.ok, summary.stderr)
        assert.include(summary.stdout, `Unlocking ${contactIds.length} accounts will cost ${total} insight credits`)
        assert.include(summary.stdout, `the user must confirm spending at most ${total} credits`)

        const unlock = [
          "contacts", "unlock", collection.id, ...selection,
          "--max-credits", String(total), "--quote-token", quote.quote_token, "--idempotency-key", quote.idempotency_key
        ]
        // Without --confirm: the server's confirmation_required (exit 3), whose recovery is to ask the user.
        const unconfirmed = yield* service([...connection(baseUrl, activateKey), ...unlock])
        assert.strictEqual(unconfirmed.code, EXIT.refused, unconfirmed.stderr)
        assert.include(unconfirmed.stderr, "(HTTP 400")
        assert.include(unconfirmed.stderr, "code: confirmation_required")
        assert.include(unconfirmed.stderr, "field: confirm")
        assert.strictEqual(unconfirmed.stdout, "")
        const declined = yield* service([...connection(baseUrl, activateKey), ...unlock, "--input-json", JSON.stringify({ confirm: false })])
        assert.strictEqual(declined.code, EXIT.refused, declined.stderr)
        assert.include(declined.stderr, "(HTTP 400")
        assert.include(declined.stderr, "code: confirmation_required")
        assert.include(declined.stderr, "recovery.action: confirm_with_the_user")
        assert.strictEqual(declined.stdout, "")
        // The demo key reads (commercial:read) but may not spend: denied before the domain sees the request.
        const denied = yield* service([...connection(baseUrl), ...unlock, "--confirm"])
        assert.strictEqual(denied.code, EXIT.denied, denied.stderr)
        assert.include(denied.stderr, "HTTP 403")
        assert.include(denied.stderr, "needs the scope commercial:activate")
        assert.strictEqual(denied.stdout, "")
        assert.strictEqual(yield* balanceNow, before, "a refused or denied unlock spends nothing")

        // Confirmed with the activating key: researched and charged the quoted total.
        const unlocked = yield* service([...connection(baseUrl, activateKey), ...unlock, "--confirm", "--json"])
        assert.strictEqual(unlocked.code, EXIT.ok, unlocked.stderr)
        const result = Schema.decodeUnknownSync(UnlockOutput)(unlocked.stdout)
        assert.deepStrictEqual(
          [result.collection_id, result.idempotency_key, result.replayed, result.test_workspace],
          [collection.id, quote.idempotency_key, false, false]
        )
        assert.sameMembers(result.accounts.map((a) => a.record_id), contactIds)
        for (const account of result.accounts) {
          assert.oneOf(account.outcome, ["found", "not_found"])
          assert.strictEqual(account.credits, quote.credits_per_account)
          if (account.outcome === "found") assert.match(account.coordinates?.email ?? "", /@sandbox\.invalid$/)
          else assert.isNull(account.coordinates)
        }
        assert.deepStrictEqual([result.charged_credits, result.refunded_credits, result.balance], [total, 0, before - total])

        // The same command again answers the first result and spends nothing.
        const retried = yield* service([...connection(baseUrl, activateKey), ...unlock, "--confirm", "--json"])
        assert.strictEqual(retried.code, EXIT.ok, retried.stderr)
        const replay = Schema.decodeUnknownSync(UnlockOutput)(retried.stdout)
        assert.deepStrictEqual(replay, { ...result, replayed: true })

        if (database === first) {
          // The process boundary for a spending command: a shell retrying it gets exit 0 and the stored answer.
          const spawned = yield* spawn([...connection(baseUrl, activateKey), ...unlock, "--confirm", "--json"])
          assert.strictEqual(spawned.code, EXIT.ok, spawned.stderr)
          assert.strictEqual(spawned.stderr, "")
          assert.deepStrictEqual(Schema.decodeUnknownSync(UnlockOutput)(spawned.stdout), { ...result, replayed: true })
        }
        assert.strictEqual(yield* balanceNow, before - total, "the unlock spent the quoted total, once")
      }), { timeout: 0 })

    if (database === first) {
      // The process boundary: one spawn per outcome a shell script tells apart.
      it.effect("the binary: results on stdout, exit 0; piped output has no colour", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const run = yield* spawn([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--limit", "2", "--json"])
          assert.strictEqual(run.code, EXIT.ok, run.stderr)
          assert.strictEqual(run.stderr, "")
          assert.propertyVal(parseJson(run.stdout), "operation", "search_suppliers")
          const help = yield* spawn(["market", "suppliers", "search", "--help"])
          assert.strictEqual(help.code, EXIT.ok, help.stderr)
          assert.include(help.stdout, "[--scian-codes <text>...]")
          assert.notMatch(help.stdout, ESC)
        }), { timeout: 0 })

      it.scoped("the binary: arrivals list --follow prints each new Arrival and each change of its status, until stopped", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const sandbox = yield* service([...connection(baseUrl), "sandboxes", "create", "--json"])
          assert.strictEqual(sandbox.code, EXIT.ok, sandbox.stderr)
          const made = Schema.decodeUnknownSync(Schema.Struct({ api_key: Schema.String, workspace: Schema.Struct({ slug: Schema.String }) }))(
            parseJson(sandbox.stdout)
          )
          const inTest = ["--base-url", baseUrl, "--api-key", made.api_key, "--workspace", made.workspace.slug]
          const source = yield* service([...inTest, "door", "sources", "create", "--name", "Followed", "--json"])
          const sourceId = Schema.decodeUnknownSync(Schema.Struct({ source: Schema.Struct({ id: Schema.String }) }))(parseJson(source.stdout)).source.id
          // The follower runs as its own process, as a user leaves it running in a terminal.
          let stdout = ""
          const child = yield* Effect.acquireRelease(
            Effect.sync(() => {
              const started = spawnChild(process.execPath, [binPath, ...inTest, "arrivals", "list", "--follow", "--json"], {
                cwd: packageDir,
                env: { PATH: process.env["PATH"] ?? "" }
              })
              started.stdout.on("data", (chunk: Buffer) => {
                stdout += chunk.toString("utf8")
              })
              return started
            }),
            (started) => Effect.sync(() => void started.kill("SIGINT"))
          )
          const sent = yield* service([...inTest, "arrivals", "send-test", sourceId, "--type", "contact.created", "--json"])
          assert.strictEqual(sent.code, EXIT.ok, sent.stderr)
          const arrival = Schema.decodeUnknownSync(Schema.Struct({ arrival: Schema.String }))(parseJson(sent.stdout)).arrival
          const Line = Schema.Struct({ id: Schema.String, status: Schema.String })
          const seen = () =>
            stdout.split("\n").filter((line) => line.trim().length > 0).map((line) => Schema.decodeUnknownSync(Line)(parseJson(line)))
          // Polled until the worker applied it: a busy machine is slow, not wrong.
          const lines = yield* Effect.sync(seen).pipe(
            Effect.flatMap((lines) => (lines.some((l) => l.status === "accepted") ? Effect.succeed(lines) : Effect.fail("waiting"))),
            Effect.retry(Schedule.spaced("250 millis"))
          )
          const mine = lines.filter((l) => l.id === arrival)
          assert.strictEqual(mine.at(-1)?.status, "accepted")
          assert.strictEqual(new Set(mine.map((l) => l.status)).size, mine.length, "each status printed once")
          assert.isNull(child.exitCode, "still following")
        }), { timeout: 0 })

      it.effect("the binary as a newcomer meets it: did-you-mean, 'an integer', a printed example that runs, --all as CSV", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const typo = yield* spawn(["market", "suppliers", "serch"])
          assert.strictEqual(typo.code, EXIT.usage)
          assert.include(typo.stderr, "Did you mean 'search'?")
          const flag = yield* spawn([...connection(baseUrl), "market", "suppliers", "search", "--limt", "2"])
          assert.strictEqual(flag.code, EXIT.usage)
          assert.include(flag.stderr, "Did you mean '--limit'?")
          const number = yield* spawn([...connection(baseUrl), "market", "suppliers", "search", "--limit", "abc"])
          assert.strictEqual(number.code, EXIT.usage)
          assert.include(number.stderr, "'abc' is not an integer")
          // The example compare-segments' help prints, pasted as printed (it once read `--segments [object Object]`).
          const help = yield* spawn(["market", "suppliers", "compare-segments", "--help"])
          const lines = help.stdout.split("\n")
          const example = (lines[lines.indexOf("EXAMPLE") + 1] ?? "").trim()
          assert.notInclude(example, "[object Object]")
          const [, ...words] = example.match(/'[^']*'|\S+/g) ?? []
          const ran = yield* spawn([...connection(baseUrl), ...words.map((word) => word.replace(/^'(.*)'$/, "$1"))])
          assert.strictEqual(ran.code, EXIT.ok, ran.stderr)
          assert.notInclude(ran.stdout, "{…}")
          // Every page as CSV: one header, the rows of every page, progress on stderr.
          const all = yield* spawn([
            ...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--municipality", "Fresnillo",
            "--limit", "2", "--all", "--format", "csv"
          ])
          assert.strictEqual(all.code, EXIT.ok, all.stderr)
          const csv = all.stdout.trim().split("\n")
          assert.match(csv[0] ?? "", /^[a-z_]+(,[a-z_.]+)+$/i)
          assert.isAbove(csv.length - 1, 2, all.stdout)
          assert.include(all.stderr, "page 2,")
          assert.include(all.stderr, "(last page)")
        }), { timeout: 0 })

      it.effect("the binary: a refusal exits 3 with the block on stderr and nothing on stdout", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const run = yield* spawn([...connection(baseUrl), "market", "suppliers", "get", "not-a-ref", "--json"])
          assert.strictEqual(run.code, EXIT.refused, run.stderr)
          assert.strictEqual(run.stdout, "")
          assert.nestedPropertyVal(parseJson(run.stderr), "market_data.semantic_code", "invalid_record_ref")
        }), { timeout: 0 })

      it.effect("the binary: usage 2, denied 4, unreachable 5, each on stderr without colour", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const usage = yield* spawn(["market", "suppliers", "frobnicate"])
          assert.strictEqual(usage.code, EXIT.usage, usage.stderr)
          const supplierCommands = MarketOperations.group.operations
            .filter((op) => op.surfaces.cli && op.cli.words[0] === "suppliers")
            .map((op) => op.cli.words[1])
          assert.include(usage.stderr, `Use one of: ${supplierCommands.join(", ")}.`)
          const denied = yield* spawn(["market", "capabilities"], { SERVICE_BASE_URL: baseUrl })
          assert.strictEqual(denied.code, EXIT.denied, denied.stderr)
          const unreachable = yield* spawn([...connection("http://127.0.0.1:9"), "market", "capabilities"])
          assert.strictEqual(unreachable.code, EXIT.unreachable, unreachable.stderr)
          assert.include(unreachable.stderr, "could not reach http://127.0.0.1:9")
          for (const run of [usage, denied, unreachable]) {
            assert.strictEqual(run.stdout, "")
            assert.notMatch(run.stderr, ESC)
          }
        }), { timeout: 0 })
    }
  })
}
