import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import * as CreditsCommands from "@service/core/CreditsCommands"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as InProcess from "../src/InProcess.js"
import * as Operators from "../src/Operators.js"

// The core bundle's operator commands, over the accounts and the credit ledger on the configured database.
const options = {
  groups: [],
  operators: Operators.commands({
    groups: [CreditsCommands.operators],
    operations: [],
    services: (access) =>
      Layer.mergeAll(Accounts.layerSql, Meter.layerSql).pipe(
        Layer.provideMerge(Migrations.layer([CoreMigrations.migrations])),
        Layer.provideMerge(Database.layerFromConfigWith({ createIfMissing: access === "database" }))
      )
  })
}

/** The command line in-process against the embedded database in `dataDir`, with the monthly allowance at 100. */
const service = (dataDir: string, args: ReadonlyArray<string>) =>
  InProcess.run(args, options).pipe(
    Effect.provide(NodeContext.layer),
    Effect.provide(NodeHttpClient.layerUndici),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", dataDir], ["SERVICE_MONTHLY_INSIGHT_CREDITS", "100"]])))
  )

const Balance = Schema.parseJson(Schema.Struct({ workspace: Schema.String, balance: Schema.Number, monthly_allowance: Schema.Number }))
// The whole account, as --json prints it.
const FullAccount = Schema.parseJson(Schema.extend(Meter.Account, Schema.Struct({ workspace: Schema.String })))

/** Accounts and the ledger on the embedded database in `dataDir`, closed again before the command line opens it. */
const onDatabase = <A, E>(dataDir: string, effect: Effect.Effect<A, E, Accounts.Accounts | Meter.Meter>) =>
  effect.pipe(
    Effect.provide(Layer.mergeAll(Accounts.layerSql, Meter.layerSqlWith({ monthlyAllowance: 100 })).pipe(
      Layer.provideMerge(Migrations.layer([CoreMigrations.migrations])),
      Layer.provideMerge(Database.layerPglite({ dataDir: NodePath.join(dataDir, "pglite") }))
    )),
    Effect.orDie
  )

describe("operator commands of the application", () => {
  // Every bundle's operator commands, as the binary builds them; none is run here.
  const all = {
    groups: App.app.groups,
    operators: Operators.commands({
      groups: App.app.operators,
      operations: App.app.groups,
      services: App.app.operatorServices
    })
  }
  const help = (args: ReadonlyArray<string>) =>
    InProcess.run(args, all).pipe(Effect.provide(NodeContext.layer), Effect.provide(NodeHttpClient.layerUndici))

  it.effect("build from their declarations: words, positional arguments and flags from the input schema", () =>
    Effect.gen(function*() {
      const root = yield* help(["--help"])
      for (const word of ["corpus", "credits", "topics-index"]) assert.include(root.stdout, word)
      const load = yield* help(["corpus", "load", "--help"])
      assert.strictEqual(load.code, 0, load.stderr)
      for (const part of ["<kind>", "<files>", "--retrieved-on", "--snapshot", "--publish", "--json"]) assert.include(load.stdout, part)
      const grant = yield* help(["credits", "grant", "--help"])
      for (const part of ["<workspace-slug>", "<credits>", "--note"]) assert.include(grant.stdout, part)
      const drift = yield* help(["topics-index", "drift", "--help"])
      for (const part of ["--repo", "--base", "--min-trust"]) assert.include(drift.stdout, part)
    }))

  it.effect("an input the schema refuses is a usage error before anything runs", () =>
    Effect.gen(function*() {
      const refused = yield* help(["corpus", "generate", "--scale", "0"])
      assert.strictEqual(refused.code, 2, refused.stdout)
      assert.include(refused.stderr, "scale")
    }))
})

describe("operator commands: service credits, declared by the core bundle, on the embedded database", () => {
  it.live("grants credits with a note, shows the balance, and refuses what it cannot do", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "credits-cli-"))),
      (dataDir) =>
        Effect.gen(function*() {
          // A workspace in the embedded database the command line will open (closed again before it runs).
          const workspace = yield* onDatabase(
            dataDir,
            Effect.flatMap(Accounts.Accounts, (accounts) => accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" }))
          )
          const granted = yield* service(dataDir, ["credits", "grant", "acme", "500", "--note", "goodwill after an outage"])
          assert.strictEqual(granted.code, 0, granted.stderr)
          assert.include(granted.stdout, "granted 500 credits to acme: balance 100 -> 600")

          const shown = yield* service(dataDir, ["credits", "balance", "acme", "--json"])
          assert.strictEqual(shown.code, 0, shown.stderr)
          const account = Schema.decodeUnknownSync(Balance)(shown.stdout)
          assert.deepStrictEqual([account.workspace, account.balance, account.monthly_allowance], ["acme", 600, 100])

          for (const args of [["credits", "grant", "nobody", "5", "--note", "x"], ["credits", "grant", "acme", "0", "--note", "x"], ["credits", "grant", "acme", "5", "--note", " "]]) {
            const refused = yield* service(dataDir, args)
            assert.strictEqual(refused.code, 2, `${args.join(" ")}: ${refused.stdout}`)
          }
          assert.include((yield* service(dataDir, ["credits", "grant", "nobody", "5", "--note", "x"])).stderr, "No workspace with the slug nobody")
          // Nothing refused was granted.
          assert.strictEqual(Schema.decodeUnknownSync(Balance)((yield* service(dataDir, ["credits", "balance", "acme", "--json"])).stdout).balance, 600)

          // Two unlock debits of 5 credits, one refunded: the balance shows both and the refund apart.
          yield* onDatabase(
            dataDir,
            Effect.gen(function*() {
              const meter = yield* Meter.Meter
              const unlock = (requestId: string) => meter.charge({ workspaceId: workspace.id, operation: "contact_unlock", requestId, credits: 5 })
              yield* unlock("req_unlock_a")
              yield* meter.refund(yield* unlock("req_unlock_b"), "provider failed for the account")
            })
          )
          const text = yield* service(dataDir, ["credits", "balance", "acme"])
          assert.strictEqual(text.code, 0, text.stderr)
          const lines = text.stdout.split("\n")
          assert.include(lines[0], "acme: 595 credits (allowance 100 a month, renews ")
          assert.include(text.stdout, "\n  contact_unlock: 1 call, 5 credits (1 refund, 5 credits back)\n")
          // Newest first: the refund, its debit, the other debit, the operator's grant, the monthly allowance.
          const ledger = lines.slice(lines.indexOf("latest ledger entries (newest first):") + 1).filter((line) => line.startsWith("  "))
          assert.deepStrictEqual(ledger.map((line) => line.trim().split(/\s+/).slice(1, 4)), [
            ["refund", "+5", "contact_unlock"],
            ["debit", "-5", "contact_unlock"],
            ["debit", "-5", "contact_unlock"],
            ["grant", "+500", "\"goodwill"],
            ["grant", "+100", "\"monthly"]
          ])
          assert.include(ledger[0], "req_unlock_b  \"provider failed for the account\"")
          assert.include(ledger[2], "req_unlock_a")

          const full = Schema.decodeUnknownSync(FullAccount)((yield* service(dataDir, ["credits", "balance", "acme", "--json"])).stdout)
          assert.deepStrictEqual(full.consumption, [
            { operation: "contact_unlock", calls: 1, credits: 5, refunds: 1, refunded_credits: 5, refused_for_credits: 0 }
          ])
          assert.deepStrictEqual(full.history.map((e) => [e.kind, e.credits, e.request_id, e.note]), [
            ["refund", 5, "req_unlock_b", "provider failed for the account"],
            ["debit", -5, "req_unlock_b", null],
            ["debit", -5, "req_unlock_a", null],
            ["grant", 500, null, "goodwill after an outage"],
            ["grant", 100, null, "monthly allowance"]
          ])
        }),
      (dataDir) => Effect.promise(() => NodeFs.rm(dataDir, { recursive: true, force: true }))
    ), { timeout: 120_000 })
})
