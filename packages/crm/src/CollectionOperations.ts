/**
 * Collections on every surface: a named selection of the workspace's contacts (what contact quotes and unlocks
 * take), made, listed, read a page of members at a time, grown, shrunk and deleted. Each change is recorded as
 * `collection.created`, `collection.updated` or `collection.deleted` with counts, never a contact's data.
 * Deleting a collection leaves its contacts in the CRM.
 *
 * @since 0.1.0
 */
import { Caller } from "@service/core/RequestContext"
import { EventLedger } from "@service/events/EventLedger"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Collection, Contact, Crm } from "./Crm.js"
import type { CrmNotFound } from "./Crm.js"
import {
  badCursor,
  CollectionId,
  ContactId,
  kit,
  NextCursor,
  notFound,
  nowIso,
  pageInputs,
  refuseMissing,
  strict,
  Text,
  transactional,
  writeScopes
} from "./internal/kit.js"
import * as Summaries from "./internal/summaries.js"

const write = { readOnly: false, destructive: false, idempotent: false, openWorld: false } as const

const ContactIds = (description: string) => Schema.Array(ContactId).pipe(Schema.minItems(1), Schema.maxItems(500)).annotations({ description })

const record = (name: "collection.created" | "collection.updated" | "collection.deleted", collection: Collection, added: number, removed: number) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const ledger = yield* EventLedger
    yield* ledger.record({
      workspaceId: caller.workspace.id,
      name,
      subject: `collection/${collection.id}`,
      payload: {
        workspace_id: caller.workspace.id,
        occurred_at: yield* nowIso,
        collection_id: collection.id,
        name: collection.name,
        size: name === "collection.deleted" ? 0 : collection.size,
        added,
        removed
      }
    })
  })

const missing = <A, R>(effect: Effect.Effect<A, CrmNotFound, R>) => Effect.catchTag(effect, "CrmNotFound", (m) => refuseMissing(m))

const current = (collectionId: string) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const crm = yield* Crm
    const found = yield* crm.getCollection(caller.workspace.id, collectionId)
    if (Option.isNone(found)) return yield* notFound("collection", collectionId)
    return found.value
  })

/** @since 0.1.0 @category operations */
export const collectionCreate = kit.make({
  name: "collection_create",
  title: "Create a collection",
  description:
    "Makes a named collection of the workspace's contacts, e.g. to quote and unlock their contact research (contact_quote, contact_unlock). Every contact_id must be the workspace's. Records collection.created.",
  refuses: ["contact_not_found"],
  annotations: write,
  scopes: writeScopes,
  http: { method: "POST", path: "/collections", input: { kind: "body" } },
  cli: { words: ["collections", "create"], summary: Summaries.collection },
  input: Schema.Struct({
    name: Text(120, "The collection's name."),
    contact_ids: Schema.optional(Schema.Array(ContactId).pipe(Schema.maxItems(500))).annotations({
      description: "Contacts to put in it (up to 500; more with collection_add)."
    })
  }).annotations({ ...strict, identifier: "CollectionCreateInput" }),
  output: Collection,
  capability: {
    question: "How do I group contacts to quote or unlock them together?",
    requires: "name; optionally contact_ids (from contact_list).",
    example: { name: "Compras Jalisco", contact_ids: ["<contact_id>"] }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const made = yield* missing(crm.createCollection(caller.workspace.id, { name: input.name, contactIds: input.contact_ids ?? [] }))
      const collection = yield* current(made.id)
      yield* record("collection.created", collection, collection.size, 0)
      return collection
    }))
})


/** @since 0.1.0 @category operations */
export const collectionList = kit.make({
  name: "collection_list",
  title: "List collections",
  description: "The workspace's collections, newest first, each with its number of contacts; page with cursor. Free.",
  refuses: [],
  paginates: true,
  http: { method: "GET", path: "/collections", input: { kind: "query" } },
  cli: { words: ["collections", "list"], summary: Summaries.collectionPage },
  ...pageInputs({}, 100, 20, "CollectionList"),
  output: Schema.Struct({ collections: Schema.Array(Collection), next_cursor: NextCursor }).annotations({ identifier: "CollectionPage" }),
  capability: { question: "Which collections of contacts does the workspace have?", requires: "Nothing; optionally limit and cursor.", example: { limit: 10 } },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const page = yield* crm.listCollections(caller.workspace.id, { limit: input.limit ?? 20, cursor: input.cursor }).pipe(
        Effect.catchTag("BadCursor", badCursor)
      )
      return { collections: page.items, next_cursor: page.nextCursor }
    })
})


/** @since 0.1.0 @category operations */
export const collectionRead = kit.make({
  name: "collection_read",
  title: "Read a collection",
  description: "A collection with a page of its contacts, in the order they were added; page with cursor.",
  refuses: ["collection_not_found"],
  paginates: true,
  http: { method: "GET", path: "/collections/:collection_id", input: { kind: "path", params: { collection_id: "collection_id" } } },
  cli: { words: ["collections", "show"], positional: "collection_id", summary: Summaries.collectionWithContacts },
  ...pageInputs({ collection_id: CollectionId }, 100, 50, "CollectionRead"),
  output: Schema.Struct({ collection: Collection, contacts: Schema.Array(Contact), next_cursor: NextCursor }).annotations({
    identifier: "CollectionWithContacts"
  }),
  capability: { question: "Who is in this collection?", requires: "collection_id; optionally limit and cursor.", example: { collection_id: "<collection_id>" } },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const collection = yield* current(input.collection_id)
      const page = yield* crm.collectionMembers(caller.workspace.id, input.collection_id, { limit: input.limit ?? 50, cursor: input.cursor }).pipe(
        Effect.catchTags({
          CrmNotFound: (m) => refuseMissing(m),
          BadCursor: badCursor
        })
      )
      return { collection, contacts: page.items, next_cursor: page.nextCursor }
    })
})

const Changed = Schema.Struct({
  collection: Collection,
  added: Schema.Number.annotations({ description: "Contacts added (those already in it are not counted)." }),
  removed: Schema.Number.annotations({ description: "Contacts removed (those not in it are not counted)." })
}).annotations({ identifier: "CollectionChanged" })

/** @since 0.1.0 @category operations */
export const collectionAdd = kit.make({
  name: "collection_add",
  title: "Add contacts to a collection",
  description: "Adds contacts of the workspace to a collection; those already in it stay as they are. Records collection.updated when it grew.",
  refuses: ["collection_not_found", "contact_not_found"],
  annotations: { ...write, idempotent: true },
  scopes: writeScopes,
  http: { method: "POST", path: "/collections/:collection_id/add", input: { kind: "body", params: { collection_id: "collection_id" } } },
  cli: { words: ["collections", "add"], positional: "collection_id" },
  input: Schema.Struct({ collection_id: CollectionId, contact_ids: ContactIds("Contacts to add (up to 500).") }).annotations({
    ...strict,
    identifier: "CollectionAddInput"
  }),
  output: Changed,
  capability: {
    question: "How do I add contacts to a collection?",
    requires: "collection_id and contact_ids.",
    example: { collection_id: "<collection_id>", contact_ids: ["<contact_id>"] }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const added = yield* missing(crm.addToCollection(caller.workspace.id, input.collection_id, input.contact_ids))
      const collection = yield* current(input.collection_id)
      if (added > 0) yield* record("collection.updated", collection, added, 0)
      return { collection, added, removed: 0 }
    }))
})

/** @since 0.1.0 @category operations */
export const collectionRemove = kit.make({
  name: "collection_remove",
  title: "Remove contacts from a collection",
  description: "Takes contacts out of a collection (they stay in the CRM); ids not in it are ignored. Records collection.updated when it shrank.",
  refuses: ["collection_not_found"],
  annotations: { ...write, idempotent: true },
  scopes: writeScopes,
  http: { method: "POST", path: "/collections/:collection_id/remove", input: { kind: "body", params: { collection_id: "collection_id" } } },
  cli: { words: ["collections", "remove"], positional: "collection_id" },
  input: Schema.Struct({ collection_id: CollectionId, contact_ids: ContactIds("Contacts to take out (up to 500).") }).annotations({
    ...strict,
    identifier: "CollectionRemoveInput"
  }),
  output: Changed,
  capability: {
    question: "How do I take contacts out of a collection?",
    requires: "collection_id and contact_ids.",
    example: { collection_id: "<collection_id>", contact_ids: ["<contact_id>"] }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const removed = yield* missing(crm.removeFromCollection(caller.workspace.id, input.collection_id, input.contact_ids))
      const collection = yield* current(input.collection_id)
      if (removed > 0) yield* record("collection.updated", collection, 0, removed)
      return { collection, added: 0, removed }
    }))
})

/** @since 0.1.0 @category operations */
export const collectionDelete = kit.make({
  name: "collection_delete",
  title: "Delete a collection",
  description: "Deletes a collection; its contacts stay in the CRM, and unlocks already made stay charged and readable. Records collection.deleted.",
  refuses: ["collection_not_found"],
  annotations: { ...write, destructive: true, idempotent: false },
  scopes: writeScopes,
  http: { method: "DELETE", path: "/collections/:collection_id", input: { kind: "path", params: { collection_id: "collection_id" } } },
  cli: { words: ["collections", "delete"], positional: "collection_id" },
  input: Schema.Struct({ collection_id: CollectionId }).annotations({ ...strict, identifier: "CollectionRef" }),
  output: Collection,
  capability: { question: "How do I delete a collection?", requires: "collection_id.", example: { collection_id: "<collection_id>" } },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const deleted = yield* missing(crm.deleteCollection(caller.workspace.id, input.collection_id))
      yield* record("collection.deleted", deleted, 0, deleted.size)
      return deleted
    }))
})

/** The collection operations, in the order the group lists them. @since 0.1.0 @category operations */
export const operations = [collectionCreate, collectionList, collectionRead, collectionAdd, collectionRemove, collectionDelete] as const
