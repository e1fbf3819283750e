/**
 * The demo key beside a running `npm start`: with no `--api-key` and no `SERVICE_API_KEY`, a command for the `demo`
 * workspace on a local address reads the key `npm start` keeps in `<SERVICE_DATA_DIR>/demo-api-key`
 * (`SERVICE_DATA_DIR` defaults to `.data`, as the server's does), so a newcomer's first `service …` works as printed.
 *
 * @since 0.1.0
 */
import { dataDirConfig } from "@service/core/LocalKeys"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/** The file the server keeps the demo key in. @since 0.1.0 @category constants */
export const fileName = "demo-api-key"

/**
 * The kept demo key, when there is one to read.
 *
 * @since 0.1.0 @category credentials
 */
export const read: Effect.Effect<Option.Option<Redacted.Redacted<string>>> = Effect.gen(function*() {
  const dir = yield* Effect.orElseSucceed(dataDirConfig, () => ".data")
  const text = yield* Effect.option(Effect.tryPromise(() => NodeFs.readFile(NodePath.join(dir, fileName), "utf8")))
  return Option.flatMap(text, (value) => (value.trim() === "" ? Option.none() : Option.some(Redacted.make(value.trim()))))
})

/** The loopback names of this machine, as URLs spell them. @since 0.1.0 @category constants */
export const loopbackHosts: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * The key a command sends: the one given, else the kept demo key when the command is for the `demo` workspace on a
 * local address (the demo key opens nothing else).
 *
 * @since 0.1.0 @category credentials
 */
export const orDemo = (
  given: Option.Option<Redacted.Redacted<string>>,
  target: { readonly baseUrl: string; readonly workspace: string }
): Effect.Effect<Option.Option<Redacted.Redacted<string>>> =>
  Option.isSome(given) || target.workspace !== "demo" || !loopbackHosts.has(URL.parse(target.baseUrl)?.hostname ?? "")
    ? Effect.succeed(given)
    : read
