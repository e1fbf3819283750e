/**
 * What every harness gives the suite to stand on, in the workspace its calls run in:
 *
 * - an owner person, so operations that `authorize` an owner or admin person (approve, merge, tag renames,
 *   the linked repository...) run for the harness's credential or principal;
 * - the scopes the served groups declare, so no call is refused for a scope (see {@link scopesOf});
 * - the records the declared capability examples name by a fixed value rather than through `exampleFrom`:
 *   the topic `to_topic` and `topics_relation_delete` name, and the repository `topics_repository_index_load`
 *   loads an index for;
 * - the CRM collection and contact the contact quote and unlock examples name (`ContactOperations.exampleRecords`).
 *
 * Seeded once per harness (once per test file and database), directly through the services.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import type * as Operation from "@service/core/Operation"
import type { Person, Scope } from "@service/core/Principal"
import type { Workspace } from "@service/core/Workspace"
import * as ContactOperations from "@service/contacts/ContactOperations"
import * as Crm from "@service/crm/Crm"
import * as Anchors from "@service/topics/Anchors"
import * as Topics from "@service/topics/Topics"
import * as AddressGuard from "@service/events/AddressGuard"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Bundles whose groups the suite does not run yet, with why. Every other bundle's groups are in
 * {@link groups}, so a new bundle is covered from its first group on.
 *
 * @since 0.1.0 @category groups
 */
export const pending: Readonly<Record<string, string>> = {
  door:
    "the CRM examples name records by placeholder with no exampleFrom (contact_read, contact_erase, opportunity_move), " +
    "the Arrival examples need an accepted Arrival from the door, and arrival_send_test needs a test workspace",
}

/**
 * What `App.layer` takes from the harness: the production address guard (public https only) with a fixed public
 * resolution, so `destinations_create`'s example address (`hooks.example.com`) passes without real DNS. Nothing is
 * delivered: the harnesses run no delivery worker.
 *
 * @since 0.1.0 @category layers
 */
export const appOptions: App.Options = {
  addressGuard: Layer.succeed(AddressGuard.AddressGuard, AddressGuard.make({ resolve: () => Effect.succeed(["93.184.215.14"]) }))
}

/** What running every served group needs. @since 0.1.0 @category models */
export type Requirements = App.Folded<typeof App.bundles>["requirements"]

const pendingGroups = new Set(
  App.bundles.filter((bundle) => bundle.name in pending).flatMap((bundle) => bundle.groups.map((group) => group.name))
)

/**
 * The groups the transports serve (`App.groups`) but those of the {@link pending} bundles.
 *
 * @since 0.1.0 @category groups
 */
export const groups: ReadonlyArray<Operation.Group<Requirements>> = App.groups.filter((group) => !pendingGroups.has(group.name))

/**
 * The topic id the topics group's examples name as an existing topic (`topics_relation_add`'s `to_topic`,
 * `topics_relation_delete`'s `topic`).
 *
 * @since 0.1.0 @category records
 */
export const exampleTopicId = "tpc_0123456789abcdef01234567"

/**
 * The repository `topics_repository_link`'s example links and `topics_repository_index_load`'s example
 * loads an index for (its default branch).
 *
 * @since 0.1.0 @category records
 */
export const exampleRepository = { name: "acme/api", default_branch: "main" } as const

/**
 * Every scope the operations of `groups` accept: a credential holding them all is refused by none.
 *
 * @since 0.1.0 @category scopes
 */
export const scopesOf = (groups: ReadonlyArray<Operation.Group<unknown>>): ReadonlyArray<Scope> =>
  Array.from(new Set(groups.flatMap((group) => group.operations.flatMap((op) => op.scopes)))).sort()

/**
 * Makes an owner person of `workspace` and seeds the records the examples name. Returns the person, for
 * the harness's credential (`issueCredential` with `personId`) or principal.
 *
 * @since 0.1.0 @category records
 */
export const seed = (
  workspace: Workspace
): Effect.Effect<Person, never, Accounts.Accounts | Topics.Topics | Anchors.Anchors | Crm.Crm | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const owner = yield* accounts.createPerson({ displayName: "Conformance owner" })
    yield* accounts.addMember({ workspaceId: workspace.id, personId: owner.id, role: "owner" })
    const topic = yield* (yield* Topics.Topics).create(workspace.id, { personId: owner.id, authority: true, via: "human" }, {
      title: "Conformance fixture topic",
      body: "The topic the capability examples relate to."
    })
    // Topic ids are generated; the examples name a fixed one. Nothing refers to the new row yet but its
    // timeline, which keeps no foreign key.
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE topics.topics SET id = ${exampleTopicId} WHERE id = ${topic.id}`
    yield* sql`UPDATE topics.events SET topic_id = ${exampleTopicId} WHERE topic_id = ${topic.id}`
    yield* (yield* Anchors.Anchors).link(workspace.id, exampleRepository)
    // The contact and collection ids are generated too; renamed before anything refers to the contact.
    const crm = yield* Crm.Crm
    const contact = yield* crm.applyContact(workspace.id, { name: "Conformance contact", email: "conformance@example.com" })
    if (contact._tag !== "Created") return yield* Effect.dieMessage(`the conformance contact was not created: ${contact._tag}`)
    yield* sql`UPDATE crm.contacts SET id = ${ContactOperations.exampleRecords.contact_id} WHERE id = ${contact.contact.id}`
    const collection = yield* crm.createCollection(workspace.id, { name: "Conformance", contactIds: [] })
    yield* sql`UPDATE crm.collections SET id = ${ContactOperations.exampleRecords.collection_id} WHERE id = ${collection.id}`
    yield* sql`INSERT INTO crm.collection_items (collection_id, contact_id)
      VALUES (${ContactOperations.exampleRecords.collection_id}, ${ContactOperations.exampleRecords.contact_id})`
    return owner
  }).pipe(Effect.orDie)
