/**
 * First-start bootstrap of the demo: workspace `demo`, its owner, and an owner API key.
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

/** @since 0.1.0 @category models */
export interface DemoBootstrap {
  readonly slug: string
  readonly created: boolean
  /** The key to print: the fixed SERVICE_DEMO_API_KEY, or one minted for this start. */
  readonly apiKey: Redacted.Redacted<string>
  readonly apiKeyFixed: boolean
}

/**
 * Ensures the demo workspace exists and returns an owner API key that works now. With `fixedKey` the key is
 * that value (registered once); without it a new key is minted on every start and shown once, since only
 * hashes are stored and an earlier key cannot be shown again.
 *
 * @since 0.1.0 @category bootstrap
 */
export const ensureDemo = (fixedKey: Option.Option<Redacted.Redacted<string>>) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
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
    const issued = yield* accounts.issueCredential({
      workspaceId: workspace.id,
      kind: "api_key",
      label: Option.isSome(fixedKey) ? "demo key (SERVICE_DEMO_API_KEY)" : "demo key",
      scopes: ["market_data:read", "commercial:read", "topics:write"],
      personId: owner.id,
      secret: Option.getOrUndefined(fixedKey)
    }).pipe(
      Effect.map((credential) => Option.some(credential.secret)),
      // A fixed key registered on an earlier start is already usable.
      Effect.catchTag("InvalidCredentialRequest", (error) =>
        Option.isSome(fixedKey) && error.detail.includes("already in use")
          ? Effect.succeed(Option.none<Redacted.Redacted<string>>())
          : Effect.die(error)),
      Effect.orDie
    )
    const apiKey = Option.isSome(issued) ? issued.value : Option.getOrThrow(fixedKey)
    return { slug, created, apiKey, apiKeyFixed: Option.isSome(fixedKey) } satisfies DemoBootstrap
  })
