/**
 * The demo person: `npm start` makes the demo workspace's owner someone who can sign in (to connect an MCP client
 * through OAuth, or to use the sign-in page), at `owner@demo.example`. The password is `SERVICE_DEMO_PASSWORD` when
 * set; otherwise it is generated on first start and kept in `<SERVICE_DATA_DIR>/demo-password` (mode 0600), as the
 * demo key is kept in `demo-api-key`. The banner prints the address, the sign-in page and where the password is.
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import type * as Bundle from "@service/core/Bundle"
import { dataDirConfig } from "@service/core/LocalKeys"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Email, People } from "./People.js"
import { PublicAddress } from "@service/core/PublicAddress"

/** The demo owner's address (RFC 2606 reserves `example`). @since 0.1.0 @category constants */
export const demoEmail = Schema.decodeSync(Email)("owner@demo.example")

/** The file in SERVICE_DATA_DIR that keeps a generated demo password. @since 0.1.0 @category constants */
export const passwordFileName = "demo-password"

const readFile = (path: string) =>
  Effect.tryPromise(() => NodeFs.readFile(path, "utf8")).pipe(
    Effect.map((text) => Option.some(text.trim()).pipe(Option.filter((value) => value.length > 0))),
    Effect.orElseSucceed(() => Option.none<string>())
  )

// Written to a new file and renamed into place: a start stopped halfway leaves no half-written password.
const writeFile = (path: string, value: string) =>
  Effect.tryPromise(async () => {
    await NodeFs.mkdir(NodePath.dirname(path), { recursive: true })
    const temporary = `${path}.${randomUUID()}.tmp`
    try {
      await NodeFs.writeFile(temporary, `${value}\n`, { flag: "wx", mode: 0o600 })
      await NodeFs.rename(temporary, path)
    } finally {
      await NodeFs.rm(temporary, { force: true })
    }
  })

/**
 * Makes the demo owner able to sign in and says how.
 *
 * @since 0.1.0 @category demo
 */
export const ensureDemoPerson = Effect.gen(function*() {
  const accounts = yield* Accounts
  const people = yield* People
  const address = yield* (yield* PublicAddress).get
  const workspace = yield* accounts.findWorkspaceBySlug("demo")
  if (Option.isNone(workspace)) return "no demo workspace"
  const owner = (yield* accounts.listMembers(workspace.value.id)).find((member) => member.role === "owner")
  if (owner === undefined) return "the demo workspace has no owner"
  const person = yield* people.find(owner.person.id)
  const email = Option.flatMap(person, (found) => Option.fromNullable(found.email))
  if (Option.isNone(email)) yield* people.setEmail(owner.person.id, demoEmail).pipe(Effect.orDie)
  const shownEmail = Option.getOrElse(email, () => demoEmail)
  const signIn = `${shownEmail} at ${address.base}/sign-in`

  const fixed = yield* Config.option(Config.redacted("SERVICE_DEMO_PASSWORD")).pipe(Effect.orDie)
  if (Option.isSome(fixed)) {
    yield* people.setPassword(owner.person.id, fixed.value).pipe(Effect.orDie)
    return `${signIn} (password: SERVICE_DEMO_PASSWORD)`
  }
  const file = NodePath.join(yield* dataDirConfig.pipe(Effect.orDie), passwordFileName)
  const kept = yield* readFile(file)
  if (Option.isSome(kept)) {
    // A new database behind the same folder: the kept password is set again.
    if (!(yield* people.hasPassword(owner.person.id))) yield* people.setPassword(owner.person.id, Redacted.make(kept.value)).pipe(Effect.orDie)
    return `${signIn} (password kept in ${file}, mode 0600)`
  }
  const generated = Redacted.make(`demo-${randomUUID()}`)
  yield* writeFile(file, Redacted.value(generated)).pipe(Effect.orDie)
  yield* people.setPassword(owner.person.id, generated).pipe(Effect.orDie)
  return `${signIn} (password in ${file}, mode 0600: new)`
})

/**
 * The banner's `Sign in` line; the work is done before the banner prints, so the line is true when read.
 *
 * @since 0.1.0 @category demo
 */
export const demoPerson: Bundle.DemoTask<Accounts | People | PublicAddress> = {
  name: "identity.demo-person",
  label: "Sign in",
  status: ensureDemoPerson,
  run: Effect.void
}
