/**
 * How a supplier read matches words, with or without a state, so that `supplier_obs_words_state_idx` (market
 * migration `0009_words_state_index`, decision 0087) serves it: the words plus a lexeme for the state, which no
 * parsed query can produce (a parsed lexeme never holds a space). The expression must stay identical to the
 * index's, or the planner cannot use the index (`SupplierWords.test` checks the plan).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"

/** The indexed expression over the observation aliased `o`. */
export const wordsAndState = (sql: SqlClient.SqlClient): Fragment =>
  sql`(o.search_tsv || array_to_tsvector(array_remove(ARRAY['state ' || o.state_code], NULL)))`

/**
 * `o`'s words match `tsquery` and, given a state, `o` is in it: one condition the index answers whole. Ranking
 * still reads `o.search_tsv` alone, so the state lexeme never changes an order.
 */
export const matchWords = (sql: SqlClient.SqlClient, tsquery: Fragment, stateCode?: string | undefined): Fragment =>
  stateCode === undefined
    ? sql`${wordsAndState(sql)} @@ ${tsquery}`
    : sql`${wordsAndState(sql)} @@ (${tsquery} && quote_literal(${`state ${stateCode}`})::tsquery)`
