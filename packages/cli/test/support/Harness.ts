/**
 * The conformance harness for the CLI: the groups given (declared and twins) served over HTTP by the http
 * package on a real listening server, over a test database with the demo corpus and a `demo` workspace key;
 * the command tree built from the same groups; and each call run through the command line in-process with
 * `--json`, as a user reads it: stdout on success, the wire error body on stderr on a refusal.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as App from "@service/app/App"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import { Crypto } from "@service/core/Crypto"
import type * as Operation from "@service/core/Operation"
import * as HttpLayer from "@service/http/HttpLayer"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import { createServer } from "node:http"
import * as Cli from "../../src/Cli.js"
import * as CommandTree from "../../src/CommandTree.js"
import { ExitCode } from "../../src/Failure.js"
import * as Format from "../../src/Format.js"
import * as InputFlags from "../../src/InputFlags.js"
import * as Run from "./Run.js"

/** What the suite's fixtures seeded: the `demo` workspace and its test workspace, keys and example values. */
export class Seeded extends Context.Tag("Seeded")<Seeded, Fixture.Seeded>() {}

/**
 * Every service of the application over a migrated test database holding what its fixtures prepare (the demo
 * corpus, a copy of the run's prepared one), with the `demo` workspace and its test workspace seeded.
 */
export const domain = (target: TestDatabase.TestDatabaseTarget, groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>) =>
  Layer.effect(Seeded, Fixture.seed(App.app, "demo", groups)).pipe(
    Layer.provideMerge(App.app.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, Fixture.appOptions).pipe(Layer.provide(Fixture.config))),
    Layer.orDie
  )

/**
 * The HTTP surface of `groups` on a listening server. Idle connections outlive the client's (undici keeps
 * one for 4 s, counted late on a busy machine): a server closing first resets the next call on it
 * (docs/decisions/0029).
 */
export const server = (groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(HttpLayer.layer(groups)),
    Layer.provideMerge(NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 }), {
      port: 0,
      host: "127.0.0.1"
    }))
  )

export const baseUrl = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  return address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : yield* Effect.dieMessage("expected a TCP address")
})

const parse = (text: string): unknown => JSON.parse(text)

/** What a successful call printed in text mode, for the test that reads every summary. */
export interface TextOutcome {
  readonly leaf: CommandTree.Leaf
  readonly body: unknown
  readonly text: string
  /** Read through the CLI without --json (reads), or rendered by the CLI's summary (writes, not repeated). */
  readonly throughCli: boolean
}

/** Every successful call's text summary, in call order. */
export const texts: Array<TextOutcome> = []

export const harness = (target: TestDatabase.TestDatabaseTarget) =>
(groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.effect(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const url = yield* baseUrl
      const client = yield* HttpClient.HttpClient
      const tree = yield* Cli.tree({ groups })
      const run = (args: ReadonlyArray<string>) => Run.run(args, { groups }).pipe(Effect.provideService(HttpClient.HttpClient, client))
      const seeded = yield* Seeded
      return {
        forbidden: seeded.forbidden,
        examples: { workspace: seeded.seats.workspace.examples, test_workspace: seeded.seats.test_workspace.examples },
        // The command lines of the tree, each proven to be a command the CLI answers.
        listed: Effect.forEach(CommandTree.lines(tree), (line) =>
          Effect.gen(function*() {
            const help = yield* run([...line.split(" ").slice(1), "--help"])
            if (help.code !== ExitCode.ok || !help.stdout.includes(line)) {
              return yield* Effect.dieMessage(`${line} --help: ${help.code} ${help.stderr}`)
            }
            return line
          })),
        call: (groupName, operation, input, where = "workspace", as = "owner") =>
          Effect.gen(function*() {
            const leaf = CommandTree.leafOf(tree, groupName, operation)
            if (leaf === undefined) return yield* Effect.dieMessage(`no command for ${groupName}.${operation}`)
            const args = [
              "--base-url", url, "--api-key", seeded.seats[where].as[as].key, "--workspace", seeded.seats[where].workspace.slug,
              ...leaf.words.slice(1), "--json", ...InputFlags.toArgs(leaf.input, input)
            ]
            const out = yield* run(args)
            const raw = `${out.stdout}\n${out.stderr}`
            if (out.code === ExitCode.ok) {
              const body = parse(out.stdout)
              // The text a user reads for the same answer: a read is run again without --json (through the CLI);
              // a write (not to be repeated) is rendered by the summary the CLI prints.
              const text = leaf.operation.annotations.readOnly
                ? (yield* run(args.filter((arg) => arg !== "--json"))).stdout
                : Format.summary(leaf.operation.cli.summary, body, {
                  input,
                  commandLine: (next) => [...leaf.words, ...InputFlags.toArgs(leaf.input, next)].join(" ")
                }, { table: leaf.operation.cli.table ?? leaf.group.cli.table, paged: leaf.input.paged })
              texts.push({ leaf, body, text, throughCli: leaf.operation.annotations.readOnly })
              return { _tag: "Success", body, raw } satisfies Conformance.Outcome
            }
            if (out.code === ExitCode.refused) {
              const body = parse(out.stderr)
              if (!Predicate.isRecord(body)) return yield* Effect.dieMessage(`not a JSON body: ${out.stderr}`)
              const status = body["statusCode"]
              return {
                _tag: "Refusal",
                status: typeof status === "number" ? status : undefined,
                block: body[leaf.group.refusals.key],
                raw
              } satisfies Conformance.Outcome
            }
            if (out.code === ExitCode.denied) {
              const body = parse(out.stderr)
              if (Predicate.isRecord(body) && body["code"] === "FORBIDDEN") {
                const status = body["statusCode"]
                return {
                  _tag: "Denied",
                  status: typeof status === "number" ? status : undefined,
                  reason: body["reason"],
                  raw
                } satisfies Conformance.Outcome
              }
            }
            return yield* Effect.dieMessage(`${args.join(" ")} exited ${out.code}: ${out.stderr}`)
          })
      }
    })
  ).pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(server(groups)),
    Layer.provide(domain(target, groups)),
    Layer.orDie
  )
