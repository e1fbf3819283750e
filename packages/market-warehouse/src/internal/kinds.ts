import type { EvidenceCategory } from "../EvidenceCategory.js"

/** The five record kinds of the warehouse, their tables and the evidence category their rows belong to. */
export type RecordKind = "supplier_observation" | "opportunity" | "award" | "risk_mark" | "permit"

export const recordKinds: ReadonlyArray<{
  readonly kind: RecordKind
  readonly table: string
  readonly category: EvidenceCategory
}> = [
  { kind: "supplier_observation", table: "supplier_observations", category: "supplier_or_organization_evidence" },
  { kind: "opportunity", table: "opportunities", category: "government_contracting" },
  { kind: "award", table: "awards", category: "government_contracting" },
  { kind: "risk_mark", table: "risk_marks", category: "administrative_risk" },
  { kind: "permit", table: "permits", category: "authorization_or_permit" }
]
