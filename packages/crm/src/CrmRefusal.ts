/**
 * The CRM's refusals: every code its operations may answer, with its status and recovery action, as one codec
 * every CRM surface shares (HTTP status, MCP tool error, CLI exit).
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "crm",
  identifier: "Crm",
  rules: {
    contact_not_found: { status: 404, retryable: false, action: "list_contacts", description: "no contact with that id in this workspace" },
    company_not_found: { status: 404, retryable: false, action: "list_companies", description: "no company with that id in this workspace" },
    pipeline_not_found: { status: 404, retryable: false, action: "list_pipelines", description: "no Pipeline with that id in this workspace" },
    stage_not_found: {
      status: 404,
      retryable: false,
      action: "list_pipelines",
      description: "the stage is not a live (unarchived) stage of that Pipeline"
    },
    opportunity_not_found: { status: 404, retryable: false, action: "list_opportunities", description: "no opportunity with that id in this workspace" },
    collection_not_found: { status: 404, retryable: false, action: "list_collections", description: "no collection with that id in this workspace" },
    contact_exists: {
      status: 409,
      retryable: false,
      action: "update_existing",
      description: "the email or phone already belongs to another contact of the workspace"
    },
    contact_erased: {
      status: 409,
      retryable: false,
      action: "stop",
      description: "the person asked for erasure: their email or phone is not stored again, and an erased contact is not edited"
    },
    no_person_key: { status: 422, retryable: false, action: "fix_arguments", description: "a contact needs a usable email or phone" },
    stage_in_use: { status: 409, retryable: false, action: "move_opportunities", description: "the stage still holds open opportunities, or is the last open one" },
    invalid_stage_order: { status: 422, retryable: false, action: "fix_arguments", description: "a reorder must name every stage of the Pipeline once" }
  },
  outage: { code: "crm_unavailable", store: "the CRM's store", suggestedCorrection: "Retry in a few seconds." },
  invalidInputDescription: "a field is missing, unknown or malformed"
})

/** @since 0.1.0 @category errors */
export class CrmRefusal extends Schema.TaggedError<CrmRefusal>("@service/crm/CrmRefusal")("CrmRefusal", defined.fields) {}

/** @since 0.1.0 @category codecs */
export const { codec, refuse } = defined.codecFor(CrmRefusal)
