/**
 * An operation is declared once: name, input and output schemas, refusals, metering, capability text and the
 * HTTP route. Every surface (HTTP, MCP, CLI, capabilities, the research belt) is derived from this value.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { MarketDataRefusal, SemanticCode } from "./MarketError.js"
import { decodeInput } from "./Validation.js"

/**
 * Where HTTP reads the input from.
 * - `body`: POST with the input as JSON body.
 * - `path`: GET whose single path parameter `param` carries input field `field`.
 * - `query`: GET whose URL parameters are the input (comma-separated lists split by the transport).
 *
 * @since 0.1.0 @category models
 */
export type HttpBinding =
  | { readonly kind: "body" }
  | { readonly kind: "path"; readonly param: string; readonly field: string }
  | { readonly kind: "query" }

/** @since 0.1.0 @category models */
export interface CapabilityText {
  /** The question this operation answers, in a caller's words. */
  readonly question: string
  /** What the caller must send. */
  readonly requires: string
  /** A runnable example input (valid against the model-facing input schema). */
  readonly example: Readonly<Record<string, unknown>>
}

/**
 * A declared operation. `R` is what running it needs (the market service and request context).
 *
 * @since 0.1.0 @category models
 */
export interface Operation<Name extends string, I, IE, MI extends I, MIE, O, OE, R> {
  readonly name: Name
  readonly title: string
  readonly description: string
  readonly method: "GET" | "POST"
  /** Path relative to `/workspaces/<slug>/market-data`. */
  readonly path: `/${string}`
  readonly http: HttpBinding
  /** Canonical input, accepted on the HTTP route. */
  readonly input: Schema.Schema<I, IE>
  /** Model-facing input (MCP, CLI): the canonical input minus fields reserved for the canonical route. */
  readonly modelInput: Schema.Schema<MI, MIE>
  readonly output: Schema.Schema<O, OE>
  readonly refuses: ReadonlyArray<SemanticCode>
  readonly metered: boolean
  readonly paginates: boolean
  readonly capability: CapabilityText
  readonly run: (input: I) => Effect.Effect<O, MarketDataRefusal, R>
  /**
   * Decodes unknown model-facing input (unknown properties refused), runs, and encodes the output: what a
   * generic transport such as MCP calls.
   */
  readonly runModel: (input: unknown) => Effect.Effect<OE, MarketDataRefusal, R>
}

/**
 * An operation whose types are erased, for transports that treat every operation alike.
 *
 * @since 0.1.0 @category models
 */
export interface AnyOperation<R> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly method: "GET" | "POST"
  readonly path: `/${string}`
  readonly http: HttpBinding
  readonly input: Schema.Schema.AnyNoContext
  readonly modelInput: Schema.Schema.AnyNoContext
  readonly output: Schema.Schema.AnyNoContext
  readonly refuses: ReadonlyArray<SemanticCode>
  readonly metered: boolean
  readonly paginates: boolean
  readonly capability: CapabilityText
  readonly runModel: (input: unknown) => Effect.Effect<unknown, MarketDataRefusal, R>
}

/**
 * Declares an operation.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <const Name extends string, I, IE, MI extends I, MIE, O, OE, R>(
  declaration: Omit<Operation<Name, I, IE, MI, MIE, O, OE, R>, "runModel">
): Operation<Name, I, IE, MI, MIE, O, OE, R> => {
  const decode = decodeInput(declaration.modelInput)
  const encode = Schema.encode(declaration.output)
  return {
    ...declaration,
    runModel: (input) =>
      decode(input).pipe(
        Effect.flatMap(declaration.run),
        // The output is produced by our own code: an encode failure is a bug, not a refusal.
        Effect.flatMap((output) => Effect.orDie(encode(output)))
      )
  }
}

/**
 * The MCP tool name of an operation: `<prefix>_market_<operation>`, without repeating `market` for
 * `market_capabilities` (so `service_market_capabilities`).
 *
 * @since 0.1.0 @category naming
 */
export const toolName = (prefix: string, operation: string): string =>
  `${prefix}_market_${operation.startsWith("market_") ? operation.slice("market_".length) : operation}`
