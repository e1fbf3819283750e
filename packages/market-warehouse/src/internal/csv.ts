/**
 * Streaming CSV records with the line each starts on, shared by every loader: `fs.createReadStream`, an
 * optional Windows-1252 decode (SAT and SFP files), then csv-parse (BOM stripped, empty lines skipped, variable
 * field counts allowed so mappers can reject such rows with a reason).
 */
import { parse } from "csv-parse"
import { Data, Effect, Either, ParseResult, Schema, Stream } from "effect"
import { createReadStream } from "node:fs"
import { Readable, Transform } from "node:stream"
import { pipeline } from "node:stream"

/** The file cannot be read or is not well-formed for the parser (the stream fails). */
export class SourceFileError extends Data.TaggedError("SourceFileError")<{
  readonly path: string
  readonly message: string
}> {}

export interface NumberedRecord {
  /** 1-based line on which the record starts. */
  readonly line: number
  readonly fields: ReadonlyArray<string>
}

export interface CsvOptions {
  /** Text encoding of the file; Node's decoder knows "windows-1252" (full ICU). Default "utf-8". */
  readonly encoding?: "utf-8" | "windows-1252"
  /** One or several delimiters (csv-parse accepts multi-character ones such as ",\t"). Default ",". */
  readonly delimiter?: string | ReadonlyArray<string>
  /** Treat quotes as ordinary characters (files whose values are never quoted but may contain `"`). */
  readonly quote?: boolean
  /** Accept a quote inside an unquoted field. */
  readonly relaxQuotes?: boolean
}

const ParsedRecord = Schema.Struct({
  record: Schema.Array(Schema.String),
  info: Schema.Struct({ lines: Schema.Number, empty_lines: Schema.Number })
})
type ParsedRecord = typeof ParsedRecord.Type
const decodeParsedRecord = Schema.decodeUnknownEither(ParsedRecord)

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const decoder = (encoding: string): Transform => {
  const text = new TextDecoder(encoding)
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      callback(null, text.decode(chunk, { stream: true }))
    },
    flush(callback) {
      callback(null, text.decode())
    }
  })
}

/**
 * Every CSV record of `path` in file order (the header row included), with its starting line.
 */
export const csvRecords = (path: string, options: CsvOptions = {}): Stream.Stream<NumberedRecord, SourceFileError> =>
  Stream.acquireRelease(
    Effect.sync(() => {
      const source = createReadStream(path)
      const parser = parse({
        bom: true,
        info: true,
        relax_column_count: true,
        skip_empty_lines: true,
        delimiter: typeof options.delimiter === "string" || options.delimiter === undefined
          ? (options.delimiter ?? ",")
          : [...options.delimiter],
        quote: options.quote === false ? false : "\"",
        relax_quotes: options.relaxQuotes ?? false
      })
      const decoded: Readable = options.encoding === "windows-1252" ? source.pipe(decoder("windows-1252")) : source
      // pipeline forwards a read error (e.g. ENOENT) to the parser, which the iterator then throws.
      pipeline(decoded, parser, () => undefined)
      source.on("error", (error) => parser.destroy(error))
      return { source, parser }
    }),
    ({ parser, source }) =>
      Effect.sync(() => {
        parser.destroy()
        source.destroy()
      })
  ).pipe(
    Stream.flatMap(({ parser }) =>
      Stream.fromAsyncIterable<unknown, SourceFileError>(parser, (e) => new SourceFileError({ path, message: errorMessage(e) }))
    ),
    Stream.mapAccumEffect(
      { lastLine: 0, emptyLines: 0 },
      (position, item): Effect.Effect<readonly [{ lastLine: number; emptyLines: number }, NumberedRecord], SourceFileError> =>
        Either.match(decodeParsedRecord(item), {
          onLeft: (error) =>
            Effect.fail(
              new SourceFileError({
                path,
                message: `unexpected csv-parse output: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
              })
            ),
          onRight: ({ info, record }: ParsedRecord) => {
            // info.lines is the line a record ends on; it starts after the previous record and any skipped empty lines.
            const line = position.lastLine + 1 + (info.empty_lines - position.emptyLines)
            return Effect.succeed([{ lastLine: info.lines, emptyLines: info.empty_lines }, { line, fields: record }] as const)
          }
        })
    )
  )
