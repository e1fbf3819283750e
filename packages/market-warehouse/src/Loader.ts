/**
 * The one load path every source format goes through: a {@link SourceParser} streams a file as records; the
 * loader batches them, upserts each kind into the loading snapshot (idempotent: loading the same file twice
 * changes nothing), logs every rejected row with file, line and reason, reports progress and counts, and
 * reconciles accepted + rejected with the rows it saw.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { basename } from "node:path"
import { Corpus, type SnapshotNotLoading, type SourceDefinition } from "./Corpus.js"
import { loadMunicipalities, municipalityByCode } from "./Municipalities.js"
import type { ParseContext, SourceParser } from "./internal/parser.js"
import type {
  AwardRecord,
  LoadItem,
  OpportunityRecord,
  PermitRecord,
  RiskMarkRecord,
  SupplierObservationRecord
} from "./internal/records.js"
import { loadScian } from "./internal/scian.js"
import { normalizeName } from "./Text.js"

/**
 * What a parser streams and {@link loadItems} takes: records of the five kinds, rejects and accepted-row markers.
 *
 * @since 0.1.0 @category models
 */
export type { LoadItem } from "./internal/records.js"

/** @since 0.1.0 @category errors */
export class LoadFailed extends Data.TaggedError("LoadFailed")<{ readonly file: string; readonly reason: string }> {
  override get message(): string {
    return `Could not load ${this.file}: ${this.reason}`
  }
}

/** @since 0.1.0 @category models */
export interface LoadReport {
  readonly file: string
  readonly kind: string
  readonly sourceSlug: string
  readonly snapshotId: string
  readonly retrievedOn: string
  /** Data rows that loaded (each may give several records). */
  readonly accepted: number
  readonly rejected: number
  readonly rejects: ReadonlyArray<{ readonly line: number; readonly reason: string }>
  /** Records written per kind, and how many of them were new to the snapshot. */
  readonly records: Readonly<Record<"supplierObservations" | "opportunities" | "awards" | "riskMarks" | "permits", number>>
  readonly inserted: number
  /** Published currency spellings mapped to ISO codes, with counts (e.g. MNX -> MXN). */
  readonly currencyMappings: ReadonlyArray<{ readonly reported: string; readonly code: string; readonly count: number }>
}

/** @since 0.1.0 @category models */
export interface LoadOptions {
  readonly snapshotId: string
  /** When the file was retrieved from its publisher (YYYY-MM-DD), kept as provenance. */
  readonly retrievedOn: string
  readonly batchSize?: number | undefined
  readonly onProgress?: ((progress: { readonly file: string; readonly rows: number }) => Effect.Effect<void>) | undefined
}

let cachedContext: Effect.Effect<ParseContext, LoadFailed> | undefined

/** Catalogs parsers resolve against, read once per process. */
export const parseContext = (): Effect.Effect<ParseContext, LoadFailed> => {
  if (cachedContext === undefined) {
    cachedContext = Effect.runSync(
      Effect.cached(
        Effect.all({ scian: loadScian(), municipalities: loadMunicipalities() }).pipe(
          Effect.mapError((error) => new LoadFailed({ file: "catalogs", reason: error.message }))
        )
      )
    )
  }
  return cachedContext
}

type Batch = {
  suppliers: Array<SupplierObservationRecord>
  opportunities: Array<OpportunityRecord>
  awards: Array<AwardRecord>
  risks: Array<RiskMarkRecord>
  permits: Array<PermitRecord>
}

interface Totals {
  readonly accepted: number
  readonly inserted: number
  readonly rejects: ReadonlyArray<{ readonly line: number; readonly reason: string }>
  readonly records: LoadReport["records"]
  readonly currencies: ReadonlyMap<string, { readonly code: string; readonly count: number }>
}

const tsvOf = (weightA: string, weightB: string) =>
  `setweight(to_tsvector('market.es', ${weightA}), 'A') || setweight(to_tsvector('market.es', ${weightB}), 'B')`

/**
 * Loads one file with its parser into a loading snapshot.
 *
 * @since 0.1.0 @category loaders
 */
export const loadFile = (
  parser: SourceParser,
  path: string,
  options: LoadOptions
): Effect.Effect<LoadReport, LoadFailed | SnapshotNotLoading, SqlClient.SqlClient | Corpus | Crypto> =>
  Effect.gen(function*() {
    const context = yield* parseContext()
    const file = basename(path)
    const source: SourceDefinition = yield* parser.sourceOf(path).pipe(
      Effect.mapError((error) => new LoadFailed({ file, reason: error.message }))
    )
    return yield* loadItems({
      source,
      kind: parser.kind,
      label: file,
      items: parser.stream(path, context).pipe(Stream.mapError((error) => new LoadFailed({ file, reason: error.message }))),
      ...options
    })
  }).pipe(Effect.withSpan("Loader.loadFile", { captureStackTrace: false, attributes: { path, kind: parser.kind } }))

/**
 * Loads a stream of items from one source into a loading snapshot. Files go through {@link loadFile}; the
 * scale generator feeds synthetic items through this same path.
 *
 * @since 0.1.0 @category loaders
 */
export const loadItems = (
  input: LoadOptions & {
    readonly source: SourceDefinition
    readonly kind: string
    /** The file name (or a label for generated input) that rejects and load reports are filed under. */
    readonly label: string
    readonly items: Stream.Stream<LoadItem, LoadFailed>
  }
): Effect.Effect<LoadReport, LoadFailed | SnapshotNotLoading, SqlClient.SqlClient | Corpus | Crypto> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const corpus = yield* Corpus
    const crypto = yield* Crypto
    const context = yield* parseContext()
    const options = input
    const source = input.source
    const file = input.label
    yield* corpus.registerSource(source)
    yield* corpus.assertLoading(options.snapshotId)
    const snapshotId = options.snapshotId
    const retrievedOn = options.retrievedOn
    const fingerprint = (kind: string, id: string) => crypto.fingerprint(kind, `${source.slug}:${id}`)
    const json = (rows: ReadonlyArray<unknown>) => JSON.stringify(rows)

    // Each kind is one statement per batch: jsonb_to_recordset then an upsert, so a re-load rewrites the same
    // values (`xmax = 0` tells new rows from rewritten ones).
    const upsertSuppliers = (rows: ReadonlyArray<SupplierObservationRecord>) =>
      Effect.gen(function*() {
        const records = yield* Effect.forEach(rows, (r) =>
          Effect.map(fingerprint("supplier_observation", r.sourceRecordId), (fp) => ({
            ...r,
            fingerprint: fp,
            name_norm: normalizeName(r.name),
            municipality_name: r.municipalityCode === null
              ? null
              : (municipalityByCode(context.municipalities, r.municipalityCode)?.name ?? null)
          })))
        return yield* sql<{ inserted: boolean }>`
          INSERT INTO market.supplier_observations (
            snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, name, legal_name, name_norm, rfc,
            scian_code, scian_title, state_code, municipality_code, municipality_name, employment_band,
            establishment_type, incorporated_on, has_phone, has_email, has_website, contact, search_tsv)
          SELECT ${snapshotId}, ${source.slug}, r."sourceRecordId", ${retrievedOn}::date, r.fingerprint, r.name,
            r."legalName", r.name_norm, r.rfc, r."scianCode", r."scianTitle", r."stateCode",
            r."municipalityCode", r.municipality_name, r."employmentBand", r."establishmentType", r."incorporatedOn",
            r."hasPhone", r."hasEmail", r."hasWebsite", r.contact,
            ${sql.literal(tsvOf(`coalesce(r.name, '') || ' ' || coalesce(r."legalName", '')`, `coalesce(r."scianTitle", '')`))}
          FROM jsonb_to_recordset(${json(records)}::jsonb) AS r(
            "sourceRecordId" text, fingerprint text, name text, "legalName" text, name_norm text, rfc text,
            "scianCode" text, "scianTitle" text, "stateCode" text, "municipalityCode" text, municipality_name text,
            "employmentBand" text, "establishmentType" text, "incorporatedOn" text, "hasPhone" boolean,
            "hasEmail" boolean, "hasWebsite" boolean, contact jsonb)
          ON CONFLICT (snapshot_id, source_slug, source_record_id) DO UPDATE SET
            retrieved_on = EXCLUDED.retrieved_on, name = EXCLUDED.name, legal_name = EXCLUDED.legal_name,
            name_norm = EXCLUDED.name_norm, rfc = EXCLUDED.rfc, scian_code = EXCLUDED.scian_code,
            scian_title = EXCLUDED.scian_title, state_code = EXCLUDED.state_code,
            municipality_code = EXCLUDED.municipality_code, municipality_name = EXCLUDED.municipality_name,
            employment_band = EXCLUDED.employment_band, establishment_type = EXCLUDED.establishment_type,
            incorporated_on = EXCLUDED.incorporated_on, has_phone = EXCLUDED.has_phone, has_email = EXCLUDED.has_email,
            has_website = EXCLUDED.has_website, contact = EXCLUDED.contact, search_tsv = EXCLUDED.search_tsv
          RETURNING (xmax = 0) AS inserted`
      })

    const upsertOpportunities = (rows: ReadonlyArray<OpportunityRecord>) =>
      Effect.gen(function*() {
        const records = yield* Effect.forEach(rows, (r) =>
          Effect.map(fingerprint("opportunity", r.sourceRecordId), (fp) => ({ ...r, fingerprint: fp })))
        return yield* sql<{ inserted: boolean }>`
          INSERT INTO market.opportunities (
            snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, title, description, buyer_name,
            buyer_acronym, procedure_type, procedure_type_text, contracting_type, status_text, is_open, actionability,
            actionability_reason, published_on, tender_start_on, tender_end_on, state_code, cog_partidas, amount,
            currency, search_tsv)
          SELECT ${snapshotId}, ${source.slug}, r."sourceRecordId", ${retrievedOn}::date, r.fingerprint, r.title,
            r.description, r."buyerName", r."buyerAcronym", r."procedureType", r."procedureTypeText",
            r."contractingType", r."statusText", r."isOpen", r.actionability, r."actionabilityReason",
            r."publishedOn"::date, r."tenderStartOn"::date, r."tenderEndOn"::date, r."stateCode",
            ARRAY(SELECT jsonb_array_elements_text(r."cogPartidas")), r.amount::numeric, r.currency,
            ${sql.literal(tsvOf(`coalesce(r.title, '')`, `coalesce(r.description, '') || ' ' || coalesce(r."buyerName", '')`))}
          FROM jsonb_to_recordset(${json(records)}::jsonb) AS r(
            "sourceRecordId" text, fingerprint text, title text, description text, "buyerName" text,
            "buyerAcronym" text, "procedureType" text, "procedureTypeText" text, "contractingType" text,
            "statusText" text, "isOpen" boolean, actionability text, "actionabilityReason" text, "publishedOn" text,
            "tenderStartOn" text, "tenderEndOn" text, "stateCode" text, "cogPartidas" jsonb, amount text, currency text)
          ON CONFLICT (snapshot_id, source_slug, source_record_id) DO UPDATE SET
            retrieved_on = EXCLUDED.retrieved_on, title = EXCLUDED.title, description = EXCLUDED.description,
            buyer_name = EXCLUDED.buyer_name, buyer_acronym = EXCLUDED.buyer_acronym,
            procedure_type = EXCLUDED.procedure_type, procedure_type_text = EXCLUDED.procedure_type_text,
            contracting_type = EXCLUDED.contracting_type, status_text = EXCLUDED.status_text,
            is_open = EXCLUDED.is_open, actionability = EXCLUDED.actionability,
            actionability_reason = EXCLUDED.actionability_reason, published_on = EXCLUDED.published_on,
            tender_start_on = EXCLUDED.tender_start_on, tender_end_on = EXCLUDED.tender_end_on,
            state_code = EXCLUDED.state_code, cog_partidas = EXCLUDED.cog_partidas, amount = EXCLUDED.amount,
            currency = EXCLUDED.currency, search_tsv = EXCLUDED.search_tsv
          RETURNING (xmax = 0) AS inserted`
      })

    const upsertAwards = (rows: ReadonlyArray<AwardRecord>) =>
      Effect.gen(function*() {
        const records = yield* Effect.forEach(rows, (r) =>
          Effect.map(fingerprint("award", r.sourceRecordId), (fp) => ({
            ...r,
            fingerprint: fp,
            supplier_name_norm: normalizeName(r.supplierName)
          })))
        return yield* sql<{ inserted: boolean }>`
          INSERT INTO market.awards (
            snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, opportunity_source_record_id, title,
            supplier_rfc, supplier_name, supplier_name_norm, supplier_size, buyer_name, buyer_acronym, procedure_type,
            contracting_type, award_date, amount, currency, currency_reported, amount_scope, cog_partidas, state_code,
            search_tsv)
          SELECT ${snapshotId}, ${source.slug}, r."sourceRecordId", ${retrievedOn}::date, r.fingerprint,
            r."opportunitySourceRecordId", r.title, r."supplierRfc", r."supplierName", r.supplier_name_norm,
            r."supplierSize", r."buyerName", r."buyerAcronym", r."procedureType", r."contractingType",
            r."awardDate"::date, r.amount::numeric, r.currency, r."currencyReported", r."amountScope",
            ARRAY(SELECT jsonb_array_elements_text(r."cogPartidas")), r."stateCode",
            ${sql.literal(tsvOf(`coalesce(r."supplierName", '')`, `coalesce(r.title, '') || ' ' || coalesce(r."buyerName", '')`))}
          FROM jsonb_to_recordset(${json(records)}::jsonb) AS r(
            "sourceRecordId" text, fingerprint text, "opportunitySourceRecordId" text, title text, "supplierRfc" text,
            "supplierName" text, supplier_name_norm text, "supplierSize" text, "buyerName" text, "buyerAcronym" text,
            "procedureType" text, "contractingType" text, "awardDate" text, amount text, currency text,
            "currencyReported" text, "amountScope" text, "cogPartidas" jsonb, "stateCode" text)
          ON CONFLICT (snapshot_id, source_slug, source_record_id) DO UPDATE SET
            retrieved_on = EXCLUDED.retrieved_on, opportunity_source_record_id = EXCLUDED.opportunity_source_record_id,
            title = EXCLUDED.title, supplier_rfc = EXCLUDED.supplier_rfc, supplier_name = EXCLUDED.supplier_name,
            supplier_name_norm = EXCLUDED.supplier_name_norm, supplier_size = EXCLUDED.supplier_size,
            buyer_name = EXCLUDED.buyer_name, buyer_acronym = EXCLUDED.buyer_acronym,
            procedure_type = EXCLUDED.procedure_type, contracting_type = EXCLUDED.contracting_type,
            award_date = EXCLUDED.award_date, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
            currency_reported = EXCLUDED.currency_reported, amount_scope = EXCLUDED.amount_scope,
            cog_partidas = EXCLUDED.cog_partidas, state_code = EXCLUDED.state_code, search_tsv = EXCLUDED.search_tsv
          RETURNING (xmax = 0) AS inserted`
      })

    const upsertRisks = (rows: ReadonlyArray<RiskMarkRecord>) =>
      Effect.gen(function*() {
        const records = yield* Effect.forEach(rows, (r) =>
          Effect.map(fingerprint("risk_mark", r.sourceRecordId), (fp) => ({
            ...r,
            fingerprint: fp,
            subject_name_norm: normalizeName(r.subjectName)
          })))
        return yield* sql<{ inserted: boolean }>`
          INSERT INTO market.risk_marks (
            snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, kind, legal_basis, subject_rfc,
            subject_name, subject_name_norm, status, status_text, listed_on, stage_dates, sanctioning_body, case_id,
            sanction_type, period, fine_amount, fine_currency)
          SELECT ${snapshotId}, ${source.slug}, r."sourceRecordId", ${retrievedOn}::date, r.fingerprint, r.kind,
            r."legalBasis", r."subjectRfc", r."subjectName", r.subject_name_norm, r.status, r."statusText",
            r."listedOn"::date, r."stageDates", r."sanctioningBody", r."caseId", r."sanctionType", r.period,
            r."fineAmount"::numeric, r."fineCurrency"
          FROM jsonb_to_recordset(${json(records)}::jsonb) AS r(
            "sourceRecordId" text, fingerprint text, kind text, "legalBasis" text, "subjectRfc" text,
            "subjectName" text, subject_name_norm text, status text, "statusText" text, "listedOn" text,
            "stageDates" jsonb, "sanctioningBody" text, "caseId" text, "sanctionType" text, period text,
            "fineAmount" text, "fineCurrency" text)
          ON CONFLICT (snapshot_id, source_slug, source_record_id) DO UPDATE SET
            retrieved_on = EXCLUDED.retrieved_on, kind = EXCLUDED.kind, legal_basis = EXCLUDED.legal_basis,
            subject_rfc = EXCLUDED.subject_rfc, subject_name = EXCLUDED.subject_name,
            subject_name_norm = EXCLUDED.subject_name_norm, status = EXCLUDED.status,
            status_text = EXCLUDED.status_text, listed_on = EXCLUDED.listed_on, stage_dates = EXCLUDED.stage_dates,
            sanctioning_body = EXCLUDED.sanctioning_body, case_id = EXCLUDED.case_id,
            sanction_type = EXCLUDED.sanction_type, period = EXCLUDED.period, fine_amount = EXCLUDED.fine_amount,
            fine_currency = EXCLUDED.fine_currency
          RETURNING (xmax = 0) AS inserted`
      })

    const upsertPermits = (rows: ReadonlyArray<PermitRecord>) =>
      Effect.gen(function*() {
        const records = yield* Effect.forEach(rows, (r) =>
          Effect.map(fingerprint("permit", r.sourceRecordId), (fp) => ({
            ...r,
            fingerprint: fp,
            holder_name_norm: normalizeName(r.holderName)
          })))
        return yield* sql<{ inserted: boolean }>`
          INSERT INTO market.permits (
            snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, permit_number, holder_name,
            holder_name_norm, holder_rfc, plant_name, permit_type, status_text, is_active_risk, is_terminated,
            is_expansion, investment_mdd, capacity_mw, estimated_generation, fuel, technology, state_code, granted_on,
            operation_start_text, ended_on)
          SELECT ${snapshotId}, ${source.slug}, r."sourceRecordId", ${retrievedOn}::date, r.fingerprint,
            r."permitNumber", r."holderName", r.holder_name_norm, r."holderRfc", r."plantName", r."permitType",
            r."statusText", r."isActiveRisk", r."isTerminated", r."isExpansion", r."investmentMdd"::numeric,
            r."capacityMw"::numeric, r."estimatedGeneration"::numeric, r.fuel, r.technology, r."stateCode",
            r."grantedOn"::date, r."operationStartText", r."endedOn"::date
          FROM jsonb_to_recordset(${json(records)}::jsonb) AS r(
            "sourceRecordId" text, fingerprint text, "permitNumber" text, "holderName" text, holder_name_norm text,
            "holderRfc" text, "plantName" text, "permitType" text, "statusText" text, "isActiveRisk" boolean,
            "isTerminated" boolean, "isExpansion" boolean, "investmentMdd" text, "capacityMw" text,
            "estimatedGeneration" text, fuel text, technology text, "stateCode" text, "grantedOn" text,
            "operationStartText" text, "endedOn" text)
          ON CONFLICT (snapshot_id, source_slug, source_record_id) DO UPDATE SET
            retrieved_on = EXCLUDED.retrieved_on, permit_number = EXCLUDED.permit_number,
            holder_name = EXCLUDED.holder_name, holder_name_norm = EXCLUDED.holder_name_norm,
            holder_rfc = EXCLUDED.holder_rfc, plant_name = EXCLUDED.plant_name, permit_type = EXCLUDED.permit_type,
            status_text = EXCLUDED.status_text, is_active_risk = EXCLUDED.is_active_risk,
            is_terminated = EXCLUDED.is_terminated, is_expansion = EXCLUDED.is_expansion,
            investment_mdd = EXCLUDED.investment_mdd, capacity_mw = EXCLUDED.capacity_mw,
            estimated_generation = EXCLUDED.estimated_generation, fuel = EXCLUDED.fuel,
            technology = EXCLUDED.technology, state_code = EXCLUDED.state_code, granted_on = EXCLUDED.granted_on,
            operation_start_text = EXCLUDED.operation_start_text, ended_on = EXCLUDED.ended_on
          RETURNING (xmax = 0) AS inserted`
      })

    /** Within one batch the last record of an id wins, as a later statement would (OCDS releases of one ocid). */
    const lastById = <A extends { readonly sourceRecordId: string }>(rows: ReadonlyArray<A>): ReadonlyArray<A> =>
      [...new Map(rows.map((r) => [r.sourceRecordId, r])).values()]

    const count = (rows: ReadonlyArray<{ readonly inserted: boolean }>) => rows.filter((r) => r.inserted).length

    const writeBatch = (batch: Batch) =>
      Effect.gen(function*() {
        let inserted = 0
        if (batch.suppliers.length > 0) inserted += count(yield* upsertSuppliers(lastById(batch.suppliers)))
        if (batch.opportunities.length > 0) inserted += count(yield* upsertOpportunities(lastById(batch.opportunities)))
        if (batch.awards.length > 0) inserted += count(yield* upsertAwards(lastById(batch.awards)))
        if (batch.risks.length > 0) inserted += count(yield* upsertRisks(lastById(batch.risks)))
        if (batch.permits.length > 0) inserted += count(yield* upsertPermits(lastById(batch.permits)))
        return inserted
      }).pipe(sql.withTransaction, Effect.orDie)

    const initial: Totals = {
      accepted: 0,
      inserted: 0,
      rejects: [],
      records: { supplierObservations: 0, opportunities: 0, awards: 0, riskMarks: 0, permits: 0 },
      currencies: new Map()
    }
    const totals = yield* input.items.pipe(
      Stream.grouped(options.batchSize ?? 500),
      Stream.runFoldEffect(initial, (acc, chunk) =>
        Effect.gen(function*() {
          const batch: Batch = { suppliers: [], opportunities: [], awards: [], risks: [], permits: [] }
          const rejects: Array<{ line: number; reason: string }> = []
          let accepted = 0
          const currencies = new Map(acc.currencies)
          for (const item of Chunk.toReadonlyArray(chunk)) {
            routeItem(item, batch, rejects, () => accepted++)
            if (item._tag === "Award" && item.record.currencyReported !== null && item.record.currency !== null) {
              const previous = currencies.get(item.record.currencyReported)
              currencies.set(item.record.currencyReported, { code: item.record.currency, count: (previous?.count ?? 0) + 1 })
            }
          }
          const inserted = yield* writeBatch(batch)
          yield* corpus.recordRejects(snapshotId, source.slug, file, rejects)
          const next = {
            accepted: acc.accepted + accepted,
            inserted: acc.inserted + inserted,
            rejects: [...acc.rejects, ...rejects],
            records: {
              supplierObservations: acc.records.supplierObservations + batch.suppliers.length,
              opportunities: acc.records.opportunities + batch.opportunities.length,
              awards: acc.records.awards + batch.awards.length,
              riskMarks: acc.records.riskMarks + batch.risks.length,
              permits: acc.records.permits + batch.permits.length
            },
            currencies
          }
          if (options.onProgress !== undefined) {
            yield* options.onProgress({ file, rows: next.accepted + next.rejects.length })
          }
          return next
        }))
    )
    const report: LoadReport = {
      file,
      kind: input.kind,
      sourceSlug: source.slug,
      snapshotId,
      retrievedOn,
      accepted: totals.accepted,
      rejected: totals.rejects.length,
      rejects: totals.rejects,
      records: totals.records,
      inserted: totals.inserted,
      currencyMappings: [...totals.currencies.entries()].map(([reported, { code, count }]) => ({ reported, code, count }))
    }
    yield* corpus.recordLoad({
      snapshotId,
      sourceSlug: source.slug,
      fileName: file,
      retrievedOn,
      accepted: report.accepted,
      rejected: report.rejected,
      report: { records: report.records, currencyMappings: report.currencyMappings, kind: input.kind }
    })
    return report
  }).pipe(Effect.withSpan("Loader.loadItems", { captureStackTrace: false, attributes: { label: input.label, kind: input.kind } }))

const routeItem = (
  item: LoadItem,
  batch: Batch,
  rejects: Array<{ line: number; reason: string }>,
  accept: () => void
): void => {
  switch (item._tag) {
    case "SupplierObservation":
      batch.suppliers.push(item.record)
      return
    case "Opportunity":
      batch.opportunities.push(item.record)
      return
    case "Award":
      batch.awards.push(item.record)
      return
    case "RiskMark":
      batch.risks.push(item.record)
      return
    case "Permit":
      batch.permits.push(item.record)
      return
    case "Reject":
      rejects.push({ line: item.line, reason: item.reason })
      return
    case "Accepted":
      accept()
      return
  }
}
