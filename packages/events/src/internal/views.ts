/** An address as reads and ledger entries show it: its origin only, since a receiver's path may carry a token. */
export const originOf = (url: string): string => {
  try {
    return new URL(url).origin
  } catch {
    return "(unreadable address)"
  }
}

/** A timestamptz column read as ISO 8601 UTC text with milliseconds. */
export const isoText = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
