/**
 * The evidence categories the warehouse files its sources and coverage under. The vocabulary belongs to the
 * warehouse (each source row and coverage row stores one); the contract serves the same closed set on the wire.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const EvidenceCategory = Schema.Literal(
  "supplier_or_organization_evidence",
  "government_contracting",
  "administrative_risk",
  "authorization_or_permit",
  "other_public_record"
)
/** @since 0.1.0 @category models */
export type EvidenceCategory = typeof EvidenceCategory.Type
