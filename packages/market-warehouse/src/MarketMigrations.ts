/**
 * The `market` schema's migrations, in the structural format the storage migration runner applies.
 *
 * @since 0.1.0
 */
import warehouse from "./migrations/0001_warehouse.js"
import recordKinds from "./migrations/0002_record_kinds.js"
import awardProcedureKey from "./migrations/0003_award_procedure_key.js"
import riskSummaries from "./migrations/0004_risk_summaries.js"
import readIndexes from "./migrations/0005_read_indexes.js"
import awardMonthTotals from "./migrations/0006_award_month_totals.js"
import publicationNotify from "./migrations/0007_publication_notify.js"
import stateSearchIndexes from "./migrations/0008_state_search_indexes.js"
import wordsStateIndex from "./migrations/0009_words_state_index.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "market",
  dependsOn: ["storage", "core"],
  migrations: {
    "0001_warehouse": warehouse,
    "0002_record_kinds": recordKinds,
    "0003_award_procedure_key": awardProcedureKey,
    "0004_risk_summaries": riskSummaries,
    "0005_read_indexes": readIndexes,
    "0006_award_month_totals": awardMonthTotals,
    "0007_publication_notify": publicationNotify,
    "0008_state_search_indexes": stateSearchIndexes,
    "0009_words_state_index": wordsStateIndex
  }
} as const
