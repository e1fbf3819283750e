/**
 * Why a runtime could not start, as one line that says what to change: a taken port, a bad variable, a data
 * folder in use. Printed instead of a stack trace; anything unforeseen still gets one line with its message.
 *
 * @since 0.1.0
 */
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Option from "effect/Option"

/** @since 0.1.0 @category models */
export interface Listening {
  readonly port: number
  readonly host: string
}

const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined

const messageOf = (error: unknown): string => {
  if (error instanceof Error && error.message.length > 0) return error.message
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message
  return String(error)
}

// Each problem with the variable it concerns, e.g. `PORT: Expected a network port value but received "abc"`.
const describeConfig = (error: ConfigError.ConfigError): string => {
  switch (error._op) {
    case "And":
    case "Or":
      return `${describeConfig(error.left)}; ${describeConfig(error.right)}`
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return `${error.path.join(".")}: ${error.message}`
  }
}

const describeServe = (error: HttpServerError.ServeError, at: Listening): string => {
  switch (codeOf(error.cause)) {
    case "EADDRINUSE":
      return `Port ${at.port} on ${at.host} is already in use: stop the process that holds it, or start with PORT set to a free port (PORT=0 picks one).`
    case "EACCES":
      return `Not allowed to listen on ${at.host}:${at.port}: use a port above 1023 (PORT) or run with the needed rights.`
    case "EADDRNOTAVAIL":
      return `HOST=${at.host} is not an address of this machine: use 127.0.0.1, or 0.0.0.0 to listen on every interface.`
    default:
      return `Could not listen on ${at.host}:${at.port}: ${messageOf(error.cause)}`
  }
}

/**
 * One line for an error that stopped the start.
 *
 * @since 0.1.0 @category formatting
 */
export const describe = (error: unknown, at: Listening): string => {
  if (HttpServerError.isServerError(error) && error._tag === "ServeError") return describeServe(error, at)
  if (ConfigError.isConfigError(error)) {
    return `Bad configuration: ${describeConfig(error)}. Fix that variable (the README lists them) and start again.`
  }
  return `Could not start: ${messageOf(error).replace(/\s+/g, " ")}`
}

/**
 * The line for a failed start, or none when it was only interrupted (Ctrl-C while starting).
 *
 * @since 0.1.0 @category formatting
 */
export const describeCause = (cause: Cause.Cause<unknown>, at: Listening): Option.Option<string> =>
  Cause.isInterruptedOnly(cause) ? Option.none() : Option.some(describe(Cause.squash(cause), at))
