/**
 * What a risk mark's status means: one definition for the warehouse (which summarizes marks per RFC at
 * publish time) and the contract (which serves `is_active` on each mark), so the two never disagree.
 *
 * @since 0.1.0
 */
import type { RiskStatus } from "./internal/records.js"

/**
 * Statuses that clear the party rather than mark it: the presumption was refuted (desvirtuado) or annulled
 * by a court (sentencia favorable). Every other status the parsers write (presunto, definitivo,
 * definitivo_69b_bis, sancion_*) is a listing in force as published.
 *
 * @since 0.1.0 @category constants
 */
export const exonerationStatuses = ["desvirtuado", "sentencia_favorable"] as const satisfies ReadonlyArray<
  typeof RiskStatus.Type
>

const exonerations: ReadonlySet<string> = new Set(exonerationStatuses)

/** Whether a mark's status is a listing in force (not an exoneration). @since 0.1.0 @category predicates */
export const isActiveStatus = (status: string): boolean => !exonerations.has(status)
