/**
 * The refusals of the identity operations (members, invitations, API keys) on every transport: one codec, so
 * HTTP and the CLI answer a refusal with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "identity",
  identifier: "Identity",
  rules: {
    member_not_found: {
      status: 404,
      retryable: false,
      action: "list_members",
      description: "no member with that person id in this workspace"
    },
    last_owner: {
      status: 409,
      retryable: false,
      action: "make_another_owner_first",
      description: "the workspace's only owner cannot be demoted or removed"
    },
    role_not_allowed: {
      status: 409,
      retryable: false,
      action: "ask_an_owner",
      description: "the caller's role cannot give, change or remove that role (only an owner acts on owners)"
    },
    handover_not_allowed: {
      status: 422,
      retryable: false,
      action: "list_members",
      description: "faceless keys are handed only to another member who is an owner or admin of the workspace"
    },
    already_member: {
      status: 409,
      retryable: false,
      action: "change_the_role_instead",
      description: "the person with that address is already a member of this workspace"
    },
    invitation_not_found: {
      status: 404,
      retryable: false,
      action: "list_invitations",
      description: "no pending invitation with that id in this workspace"
    },
    key_not_found: {
      status: 404,
      retryable: false,
      action: "list_keys",
      description: "no API key with that id that the caller may see in this workspace"
    },
    scope_not_held: {
      status: 422,
      retryable: false,
      action: "ask_for_fewer_scopes",
      description: "a key can only be given scopes the credential that creates it holds (a signed-in person may give any)"
    },
    spending_not_allowed: {
      status: 422,
      retryable: false,
      action: "ask_an_owner_or_admin",
      description: "only the workspace's owners and admins give commercial:activate, unless an owner lets members spend"
    },
    spending_cap_out_of_range: {
      status: 422,
      retryable: false,
      action: "fix_the_cap",
      description: "letting members spend needs a monthly cap per member of 1 credit or more; leaving them out needs none"
    },
    faceless_not_allowed: {
      status: 422,
      retryable: false,
      action: "create_a_personal_key",
      description: "only an owner or admin person creates keys with no person behind them"
    }
  },
  outage: { code: "identity_unavailable", store: "the account store" }
})

/**
 * A refusal of an identity operation.
 *
 * @since 0.1.0 @category errors
 */
export class IdentityRefusal extends Schema.TaggedError<IdentityRefusal>("@service/identity/IdentityRefusal")(
  "IdentityRefusal",
  defined.fields
) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(IdentityRefusal)
