/**
 * The contract between a source file format and the generic loader: a parser names the source a file belongs
 * to and streams the file as {@link LoadItem}s. The loader does the rest (batching, idempotent inserts, reject
 * log, counts, progress), the same for every format.
 */
import type { Effect, Option, Stream } from "effect"
import type { SourceDefinition } from "../Corpus.js"
import type { SourceFileError } from "./csv.js"
import type { MunicipalityCatalog } from "../Municipalities.js"
import type { LoadItem } from "./records.js"
import type { ScianCatalog } from "./scian.js"

/** Reference catalogs a parser may resolve against. */
export interface ParseContext {
  readonly scian: ScianCatalog
  readonly municipalities: MunicipalityCatalog
}

export interface SourceParser {
  /** The kind named on the command line: `service corpus load <kind> <files...>`. */
  readonly kind: string
  readonly description: string
  /** The published source a file belongs to (one kind may span several publishers, as OCDS does). */
  readonly sourceOf: (path: string) => Effect.Effect<SourceDefinition, SourceFileError>
  /**
   * Every data row of the file as items, in file order. Each data row yields its records followed by one
   * `Accepted`, or exactly one `Reject` with the reason; nothing is dropped silently.
   */
  readonly stream: (path: string, context: ParseContext) => Stream.Stream<LoadItem, SourceFileError>
  /** The number of data rows (CSV records after the header, or top-level JSON objects), for reconciliation. */
  readonly countDataRows: (path: string) => Effect.Effect<number, SourceFileError>
  /**
   * The date the file states its information is current to, when it says so (SAT preambles, SFP update
   * column): the best retrieval date when none is given.
   */
  readonly publishedAsOf?: ((path: string) => Effect.Effect<Option.Option<string>, SourceFileError>) | undefined
}
