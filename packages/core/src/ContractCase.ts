/**
 * A requirement of a domain's contract written as a call and what the caller must see, so the shared
 * conformance suite can run it on every transport against a real corpus. A group carries its cases next
 * to its declarations; nothing else keeps a list of them.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 @category models */
export type Surface = "http" | "mcp" | "cli"

/** Values read from earlier calls, by the name the case gave them. @since 0.1.0 @category models */
export type Given = Readonly<Record<string, unknown>>

/**
 * A value read from the answer of an earlier call (a record_ref, a cursor, a count).
 *
 * @since 0.1.0 @category models
 */
export interface Read {
  readonly operation: string
  /** A function of the values read before this one (reads run in the order written). */
  readonly input: Readonly<Record<string, unknown>> | ((given: Given) => Readonly<Record<string, unknown>>)
  /** Where the value sits in the answer, e.g. `["page", "nextCursor"]`. */
  readonly path: ReadonlyArray<string | number>
}

/**
 * What the caller must see. A check returns the violations it found (none means it holds).
 *
 * @since 0.1.0 @category models
 */
export type Expectation =
  | {
    /** The refusal's code (the codec's `codeField`). */
    readonly refused: string
    readonly check?: ((block: unknown, given: Given) => ReadonlyArray<string>) | undefined
  }
  | { readonly answered: (body: unknown, given: Given) => ReadonlyArray<string> }

/**
 * One runnable requirement.
 *
 * @since 0.1.0 @category models
 */
export interface Case {
  /** Where the requirement is written, e.g. `rule 7`, `errors: batch_too_large`, `limits: page size`. */
  readonly rule: string
  readonly title: string
  readonly operation: string
  /** The surfaces the case applies to; every surface the operation is served on when absent. */
  readonly surfaces?: ReadonlyArray<Surface> | undefined
  /** Values read first, then handed to `input` and to the checks. */
  readonly given?: Readonly<Record<string, Read>> | undefined
  /** Model-facing input, as a caller of the transport writes it. */
  readonly input: Readonly<Record<string, unknown>> | ((given: Given) => Readonly<Record<string, unknown>>)
  readonly expect: Expectation
}

/**
 * A requirement no single call can show (a republish under a cursor, a statement timeout, a wrong HTTP
 * verb), and the test file that shows it.
 *
 * @since 0.1.0 @category models
 */
export interface Elsewhere {
  readonly rule: string
  readonly reason: string
  /** Repository-relative path of the test file. */
  readonly file: string
  /** Words of the test's title, as written in that file. */
  readonly test: string
}

/**
 * Declares a case (an identity that keeps the literal's shape checked).
 *
 * @since 0.1.0 @category constructors
 */
export const make = (c: Case): Case => c
