import * as Predicate from "effect/Predicate"

// Socket-level failures: the server is down, unreachable or dropped the connection.
const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

// SQLSTATE: class 08 (connection exception); 57P01-57P03 (the server is shutting down or starting).
const isOutageState = (code: string): boolean => code.startsWith("08") || ["57P01", "57P02", "57P03"].includes(code)

// What node-postgres and PGlite say when a connection ends under a query, or cannot be opened in time.
const outageMessage = /connection terminated|connection ended|terminating connection|client has encountered a connection error|timeout exceeded when trying to connect|pglite is closed/i

const causeChain = (value: unknown): ReadonlyArray<Record<string, unknown>> => {
  const chain: Array<Record<string, unknown>> = []
  let current = value
  while (Predicate.isRecord(current) && chain.length < 8 && !chain.includes(current)) {
    chain.push(current)
    const errors = current["errors"]
    if (Array.isArray(errors)) for (const inner of errors) if (Predicate.isRecord(inner)) chain.push(inner)
    current = current["cause"]
  }
  return chain
}

/**
 * Whether a defect is a database outage (the store is unreachable or dropped the connection) rather
 * than a fault of the program: a `SqlError` whose cause is a socket failure, a connection-class SQLSTATE or
 * a driver's connection-lost message.
 */
export const isOutage = (defect: unknown): boolean =>
  Predicate.isTagged(defect, "SqlError") &&
  causeChain(defect).some((error) => {
    const code = error["code"]
    const message = error["message"]
    return (typeof code === "string" && (networkCodes.has(code) || isOutageState(code))) ||
      (typeof message === "string" && outageMessage.test(message))
  })
