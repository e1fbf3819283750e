/**
 * The `instructions` every MCP session of the application starts with (HTTP and stdio alike): what an agent needs
 * once per session, so that no tool description has to repeat it (docs/decisions/0074).
 *
 * @since 0.1.0
 */

/**
 * How to use the server, written for an agent: where to start, what the envelope's blocks mean, how to page,
 * how to recover from a refusal, and what costs credits.
 *
 * @since 0.1.0 @category constants
 */
export const instructions = `Commercial intelligence on published Mexican market data (suppliers, procurement opportunities, awards, risk marks, permits), plus the workspace's CRM, governed knowledge topics and event intake. You only see the tools this credential can call.

Start: call service_market_capabilities (free) to learn what each market tool answers and which states, SCIAN codes and record kinds exist. Then search narrowly (a state plus an activity, an RFC, or a few specific words) with a small limit; a search with nothing to narrow it is refused.

Every result is one JSON text. Market tools answer an envelope: results; coverage (which published sources contributed, licensedForDisplay, visibleRows, freshness: read it before saying something does not exist, zero results only mean these sources hold nothing); corpusBasis (the snapshot read); semanticWarnings (read them: a supplier row is one published observation, not a verified company); provenance (where each row was read: a publication of record, not a verification); interpretedRequest (how your input was normalized). Copy a record_ref verbatim into get_* tools within the session; recognize a row across responses by record_fingerprint.

Trust signal: topics carry trust (reviewed > proposed > draft) and governance. Prefer reviewed knowledge (min_trust), and say when an answer rests on a draft, proposed, stale or drifted topic.

Paging: when has_more is true, call again with the same arguments and cursor set to page.nextCursor (next_cursor in CRM lists; topic events take it as before; topic and tag lists page with offset instead). invalid_cursor or cursor_stale: start again without a cursor.

Refusals: an error result has code, message, request_id and a block named after its area (market_data, crm, topics...) with semantic_code, suggested_correction and recovery.action; do what the action says (fix_arguments: change the named field; narrow_query: add a filter; search_again: the ref is gone; retry_backoff: wait and retry). FORBIDDEN names the missing scope (required_scopes) or role; RATE_LIMITED gives retry_after_seconds. Unknown arguments are refused, naming the field. Quote request_id when reporting a problem.

Credits: tools whose _meta has service/metered cost one insight credit per successful call; a refused call costs nothing. service_account_usage shows the balance. service_contact_unlock spends credits: call it only after the user accepted a service_contact_quote.`
