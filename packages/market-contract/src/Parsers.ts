/**
 * Every source format the warehouse loads, by the kind named on the command line.
 *
 * @since 0.1.0
 */
import { creParser } from "./internal/cre.js"
import { denueParser } from "./internal/denueParser.js"
import type { SourceParser } from "./internal/parser.js"

/** @since 0.1.0 @category models */
export type { SourceParser } from "./internal/parser.js"

/** @since 0.1.0 @category parsers */
export const all: ReadonlyArray<SourceParser> = [denueParser, creParser]

/** @since 0.1.0 @category parsers */
export const kinds: ReadonlyArray<string> = all.map((p) => p.kind)

/** @since 0.1.0 @category parsers */
export const byKind = (kind: string): SourceParser | undefined => all.find((p) => p.kind === kind)
