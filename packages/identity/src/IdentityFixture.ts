/**
 * The identity bundle's conformance fixture: two teammates in each workspace, one whose role the example changes and
 * one the example removes.
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import type * as Bundle from "@service/core/Bundle"
import * as Effect from "effect/Effect"

/** @since 0.1.0 @category fixtures */
export const fixture: Bundle.Fixture<Accounts> = {
  seed: ({ workspace }) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const promoted = yield* accounts.createPerson({ displayName: "Conformance teammate" })
      const leaving = yield* accounts.createPerson({ displayName: "Conformance leaver" })
      yield* accounts.addMember({ workspaceId: workspace.id, personId: promoted.id, role: "member" })
      yield* accounts.addMember({ workspaceId: workspace.id, personId: leaving.id, role: "member" })
      return {
        member_role_set: { person_id: promoted.id, role: "admin" },
        member_remove: { person_id: leaving.id },
        spending_set: { members_may_spend: true, member_monthly_cap: 500 }
      }
    })
}
