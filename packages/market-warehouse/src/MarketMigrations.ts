/**
 * The `market` schema's migrations, in the structural format the storage migration runner applies.
 *
 * @since 0.1.0
 */
import warehouse from "./migrations/0001_warehouse.js"
import recordKinds from "./migrations/0002_record_kinds.js"
import awardProcedureKey from "./migrations/0003_award_procedure_key.js"
import riskSummaries from "./migrations/0004_risk_summaries.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "market",
  dependsOn: ["storage", "core"],
  migrations: {
    "0001_warehouse": warehouse,
    "0002_record_kinds": recordKinds,
    "0003_award_procedure_key": awardProcedureKey,
    "0004_risk_summaries": riskSummaries
  }
} as const
