/**
 * Identity's part of a person's erasure (decision 0071, issue 32 row 6): the workspace's invitations to one of the
 * person's addresses. A pending one is revoked (its link stops working) and every one, pending or not, keeps no
 * address: it reads `[erased]`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Effect from "effect/Effect"

/** @since 0.1.0 @category erasers */
export const invitations = Erasure.make<SqlClient.SqlClient>({
  store: "identity.invitations",
  erase: (subject) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const emails = subject.values.emails.map((email) => email.trim().toLowerCase()).filter((email) => email.includes("@"))
      if (emails.length === 0) return 0
      const rows = yield* sql`UPDATE identity.invitations SET email = ${Erasure.ERASED}, revoked_at = coalesce(revoked_at, now())
        WHERE workspace_id = ${subject.workspaceId} AND lower(email) IN ${sql.in(emails)} RETURNING id`.pipe(Effect.orDie)
      return rows.length
    })
})

/** @since 0.1.0 @category erasers */
export const erasers = [invitations] as const
