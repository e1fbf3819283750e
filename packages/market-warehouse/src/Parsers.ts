/**
 * Every source format the warehouse loads, by the kind named on the command line.
 *
 * @since 0.1.0
 */
import { compranetParser } from "./internal/compranet.js"
import { creParser } from "./internal/cre.js"
import { denueParser } from "./internal/denueParser.js"
import { ocdsParser } from "./internal/ocds.js"
import type { SourceParser } from "./internal/parser.js"
import { sat69bParser } from "./internal/sat69b.js"
import { sfpParser } from "./internal/sfp.js"

/** @since 0.1.0 @category models */
export type { SourceParser } from "./internal/parser.js"

/** @since 0.1.0 @category parsers */
export const all: ReadonlyArray<SourceParser> = [
  denueParser,
  compranetParser,
  ocdsParser,
  sat69bParser,
  sfpParser,
  creParser
]

/** @since 0.1.0 @category parsers */
export const kinds: ReadonlyArray<string> = all.map((p) => p.kind)

/** @since 0.1.0 @category parsers */
export const byKind = (kind: string): SourceParser | undefined => all.find((p) => p.kind === kind)
