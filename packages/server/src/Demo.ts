/**
 * First-start bootstrap of the demo: workspace `demo`, its owner, and an owner API key.
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import { Authenticator } from "@service/core/Authenticator"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Data from "effect/Data"
import { Scope } from "@service/core/Principal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/** @since 0.1.0 @category constants */
export const DEMO_KEY_FILE_NAME = "demo-api-key"

/** @since 0.1.0 @category models */
export interface DemoBootstrap {
  readonly slug: string
  readonly created: boolean
  /** The key to print: the fixed SERVICE_DEMO_API_KEY, or the one kept in the data folder. */
  readonly apiKey: Redacted.Redacted<string>
  /** Where the key came from: the environment, the data folder's key file (reused), or minted by this start. */
  readonly apiKeySource: "environment" | "file" | "minted"
  readonly keyFile: Option.Option<string>
}

/** @since 0.1.0 @category errors */
export class DemoKeyFileError extends Data.TaggedError("DemoKeyFileError")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `Demo key file ${this.path}: ${this.reason}`
  }
}

// Every scope but commercial:activate, which is never implicit (it spends money), and the transitional context:read.
const scopes = Scope.literals.filter((scope) => scope !== "commercial:activate" && scope !== "context:read")

// Same shape as the keys Accounts generates, so the demo key reads like any other.
const newSecret = (): string => `svc_key_${randomBytes(32).toString("base64url")}`

const readKeyFile = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      const text = await NodeFs.readFile(path, "utf8").catch((cause: unknown) => {
        if (typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ENOENT") return undefined
        throw cause
      })
      const key = text?.trim()
      return key === undefined || key.length === 0 ? Option.none<string>() : Option.some(key)
    },
    catch: (cause) => new DemoKeyFileError({ path, reason: `cannot read it: ${String(cause)}` })
  })

// Written under a temporary name (owner-only) and renamed into place, so the file is never half written.
const writeKeyFile = (path: string, key: string) =>
  Effect.tryPromise({
    try: async () => {
      await NodeFs.mkdir(NodePath.dirname(path), { recursive: true })
      const temporary = `${path}.${randomUUID()}.tmp`
      try {
        await NodeFs.writeFile(temporary, `${key}\n`, { flag: "wx", mode: 0o600 })
        await NodeFs.rename(temporary, path)
      } finally {
        await NodeFs.rm(temporary, { force: true })
      }
    },
    catch: (cause) => new DemoKeyFileError({ path, reason: `cannot write it: ${String(cause)}` })
  })

/**
 * Ensures the demo workspace exists and returns an owner API key that works now.
 *
 * - With `fixedKey` (SERVICE_DEMO_API_KEY) that value is registered once and used.
 * - With `keyFile` the key kept there (mode 0600) is reused across starts; a missing file gets a new key,
 *   written before it is registered so a start stopped in between leaves no key nobody can read. A key in
 *   the file that no longer works here (fresh database, revoked) is registered again or replaced.
 * - With neither, a new key is minted on every start (only hashes are stored, so none can be shown again).
 *
 * @since 0.1.0 @category bootstrap
 */
export const ensureDemo = (fixedKey: Option.Option<Redacted.Redacted<string>>, keyFile?: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const authenticator = yield* Authenticator
    const slug = WorkspaceSlug.make("demo")
    const existing = yield* accounts.findWorkspaceBySlug(slug)
    const created = Option.isNone(existing)
    const workspace = Option.isSome(existing)
      ? existing.value
      : yield* accounts.createWorkspace({ slug, name: "Demo workspace" }).pipe(Effect.orDie)
    const members = yield* accounts.listMembers(workspace.id)
    const existingOwner = members.find((m) => m.role === "owner")?.person
    const owner = existingOwner ?? (yield* accounts.createPerson({ displayName: "Demo owner" }))
    if (existingOwner === undefined) {
      yield* accounts.addMember({ workspaceId: workspace.id, personId: owner.id, role: "owner" }).pipe(Effect.orDie)
    }

    const worksHere = (key: Redacted.Redacted<string>) =>
      authenticator.authenticate({ kind: "api_key", secret: key }).pipe(
        // A key kept from an older version gets the scopes the demo key has now.
        Effect.tap((principal) =>
          principal.workspace.id === workspace.id && scopes.some((scope) => !principal.scopes.includes(scope))
            ? accounts.updateScopes(principal.credential.id, [...scopes]).pipe(Effect.orDie)
            : Effect.void
        ),
        Effect.map((principal) => principal.workspace.id === workspace.id),
        Effect.orElseSucceed(() => false)
      )
    const register = (key: Redacted.Redacted<string> | undefined, label: string) =>
      accounts.issueCredential({
        workspaceId: workspace.id,
        kind: "api_key",
        label,
        scopes: [...scopes],
        personId: owner.id,
        secret: key
      }).pipe(Effect.map((credential) => credential.secret))

    if (Option.isSome(fixedKey)) {
      if (!(yield* worksHere(fixedKey.value))) {
        yield* register(fixedKey.value, "demo key (SERVICE_DEMO_API_KEY)").pipe(Effect.orDie)
      }
      return { slug, created, apiKey: fixedKey.value, apiKeySource: "environment", keyFile: Option.none() } satisfies DemoBootstrap
    }
    if (keyFile === undefined) {
      const minted = yield* register(undefined, "demo key").pipe(Effect.orDie)
      return { slug, created, apiKey: minted, apiKeySource: "minted", keyFile: Option.none() } satisfies DemoBootstrap
    }

    const kept = yield* readKeyFile(keyFile)
    if (Option.isSome(kept)) {
      const key = Redacted.make(kept.value)
      if (yield* worksHere(key)) {
        return { slug, created, apiKey: key, apiKeySource: "file", keyFile: Option.some(keyFile) } satisfies DemoBootstrap
      }
      // Unknown to this database (a new one behind the same folder): register it. A key that exists but no
      // longer works (revoked, expired) is refused as in use; then a new one replaces it in the file.
      const registered = yield* register(key, "demo key").pipe(Effect.option)
      if (Option.isSome(registered)) {
        return { slug, created, apiKey: key, apiKeySource: "file", keyFile: Option.some(keyFile) } satisfies DemoBootstrap
      }
    }
    const fresh = newSecret()
    yield* writeKeyFile(keyFile, fresh)
    const apiKey = yield* register(Redacted.make(fresh), "demo key").pipe(Effect.orDie)
    return { slug, created, apiKey, apiKeySource: "minted", keyFile: Option.some(keyFile) } satisfies DemoBootstrap
  })
