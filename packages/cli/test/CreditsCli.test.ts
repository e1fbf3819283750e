import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Cli from "../src/Cli.js"
import * as CreditsCli from "../src/CreditsCli.js"
import * as InProcess from "../src/InProcess.js"

const options = { groups: [], operators: [Cli.operator(CreditsCli.command)] }

/** The command line in-process against the embedded database in `dataDir`, with the monthly allowance at 100. */
const service = (dataDir: string, args: ReadonlyArray<string>) =>
  InProcess.run(args, options).pipe(
    Effect.provide(NodeContext.layer),
    Effect.provide(NodeHttpClient.layerUndici),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", dataDir], ["SERVICE_MONTHLY_INSIGHT_CREDITS", "100"]])))
  )

const Balance = Schema.parseJson(Schema.Struct({ workspace: Schema.String, balance: Schema.Number, monthly_allowance: Schema.Number }))

describe("service credits (operator commands on the embedded database)", () => {
  it.live("grants credits with a note, shows the balance, and refuses what it cannot do", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "credits-cli-"))),
      (dataDir) =>
        Effect.gen(function*() {
          // A workspace in the embedded database the command line will open (closed again before it runs).
          yield* Effect.flatMap(Accounts.Accounts, (accounts) => accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })).pipe(
            Effect.provide(Accounts.layerSql.pipe(
              Layer.provideMerge(Migrations.layer([CoreMigrations.migrations])),
              Layer.provideMerge(Database.layerPglite({ dataDir: NodePath.join(dataDir, "pglite") }))
            )),
            Effect.orDie
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
        }),
      (dataDir) => Effect.promise(() => NodeFs.rm(dataDir, { recursive: true, force: true }))
    ), { timeout: 120_000 })
})
