/**
 * The CRM's part of a person's erasure beyond the contact row itself (`Crm.erase` clears that and keeps the
 * fingerprints): titles of opportunities made from the person's name, and company and collection names that hold
 * one of their values (decision 0071).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The title the door gives an opportunity of a contact without a name. @since 0.1.0 @category constants */
export const UNNAMED_TITLE = "New contact"

/**
 * Opportunity titles: the person's own opportunities whose title holds a value get the title of an unnamed
 * contact; any other title holding a value is scrubbed.
 *
 * @since 0.1.0 @category erasers
 */
export const opportunityTitles = Erasure.make<SqlClient.SqlClient>({
  store: "crm.opportunities",
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT id, contact_id, title FROM crm.opportunities
        WHERE workspace_id = ${subject.workspaceId} AND (contact_id = ${subject.contactId} OR title ~* ${match.candidate})`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String, contact_id: Schema.NullOr(Schema.String), title: Schema.String })))),
        Effect.orDie
      )
      let redacted = 0
      for (const row of rows) {
        if (!match.test(row.title)) continue
        const title = row.contact_id === subject.contactId ? UNNAMED_TITLE : match.scrub(row.title)
        yield* sql`UPDATE crm.opportunities SET title = ${title} WHERE id = ${row.id}`.pipe(Effect.orDie)
        redacted++
      }
      return redacted
    })
})

/** @since 0.1.0 @category erasers */
export const companies = Erasure.scrubbing({
  store: "crm.companies",
  table: "crm.companies",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const collections = Erasure.scrubbing({
  store: "crm.collections",
  table: "crm.collections",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }]
})

/** A Pipeline's name, written by a person (issue 32 row 6). @since 0.1.0 @category erasers */
export const pipelines = Erasure.scrubbing({
  store: "crm.pipelines",
  table: "crm.pipelines",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }]
})

/** A stage's name (a stage belongs to its Pipeline's workspace). @since 0.1.0 @category erasers */
export const stages = Erasure.scrubbing({
  store: "crm.stages",
  table: "crm.stages",
  key: "id",
  workspace: "(SELECT p.workspace_id FROM crm.pipelines p WHERE p.id = crm.stages.pipeline_id)",
  columns: [{ name: "name", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const erasers = [opportunityTitles, companies, collections, pipelines, stages] as const
