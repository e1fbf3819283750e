/**
 * What quote and unlock both read: the selected contacts of one collection, and which of them the workspace
 * already unlocked (or has an unlock researching), so both price a selection the same way.
 */
import type { Principal } from "@service/core/Principal"
import { type Contact, Crm } from "@service/crm/Crm"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { refuse } from "../ContactsRefusal.js"

/** Who a quote is bound to: the person behind the credential when there is one, else the credential. */
export const principalKey = (principal: Principal): string =>
  principal.person._tag === "Some" ? `person:${principal.person.value.id}` : `credential:${principal.credential.id}`

export const sortedUnique = (ids: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(ids)].sort()

export interface Selection {
  readonly recordIds: ReadonlyArray<string>
  readonly contacts: ReadonlyMap<string, Contact>
  /** Selected accounts the workspace already unlocked, or that an unlock is researching now. */
  readonly unlocked: ReadonlySet<string>
}

export const select = (workspaceId: string, collectionId: string, recordIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const crm = yield* Crm
    const selected = sortedUnique(recordIds)
    const contacts = yield* crm.collectionContacts(workspaceId, collectionId, selected).pipe(
      Effect.catchTag("CrmNotFound", () =>
        Effect.fail(refuse("collection_not_found", `No collection ${collectionId} in this workspace.`, "Choose a collection of this workspace.", {
          field: "collection_id"
        })))
    )
    const byId = new Map(contacts.map((contact) => [contact.id, contact]))
    const strangers = selected.filter((id) => !byId.has(id))
    if (strangers.length > 0) {
      return yield* refuse(
        "records_not_in_collection",
        `Not contacts of collection ${collectionId}: ${strangers.slice(0, 10).join(", ")}${strangers.length > 10 ? ", …" : ""}.`,
        "Select record ids from the collection's contacts.",
        { field: "record_ids" }
      )
    }
    const unlocked = new Set(
      (yield* sql<{ contact_id: string }>`SELECT contact_id FROM contacts.unlocked
        WHERE workspace_id = ${workspaceId} AND contact_id IN ${sql.in(selected)}`.pipe(Effect.orDie)).map((row) => row.contact_id)
    )
    const selection: Selection = { recordIds: selected, contacts: byId, unlocked }
    return selection
  })
