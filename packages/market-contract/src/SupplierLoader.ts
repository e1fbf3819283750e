/**
 * Loads supplier observations from INEGI DENUE files (all three published layouts) into a loading snapshot.
 * Streams the file, never drops a row silently (rejects are logged with line and reason), and is idempotent:
 * loading the same file twice into one snapshot changes nothing.
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
import { Corpus, type SnapshotNotLoading, SourceDefinition } from "./Corpus.js"
import { type DenueObservation, type DenueReferences, streamDenue } from "./internal/denue.js"
import { loadMunicipalities, municipalityByCode } from "./internal/municipalities.js"
import { loadScian } from "./internal/scian.js"
import { normalizeName } from "./internal/text.js"

/**
 * DENUE as a published source. INEGI's terms allow redistribution with attribution, so it is licensed for display.
 *
 * @since 0.1.0 @category sources
 */
export const denueSource = new SourceDefinition({
  slug: "inegi_denue",
  label: "Directorio Estadístico Nacional de Unidades Económicas",
  publisher: "INEGI",
  licence: "INEGI Términos de Libre Uso de la Información (attribution to INEGI)",
  licensedForDisplay: true,
  evidenceCategory: "supplier_or_organization_evidence"
})

/** @since 0.1.0 @category errors */
export class LoadFailed extends Data.TaggedError("LoadFailed")<{ readonly file: string; readonly reason: string }> {
  override get message(): string {
    return `Could not load ${this.file}: ${this.reason}`
  }
}

/** @since 0.1.0 @category models */
export interface LoadReport {
  readonly file: string
  readonly sourceSlug: string
  readonly snapshotId: string
  readonly accepted: number
  readonly inserted: number
  readonly rejected: number
  readonly rejects: ReadonlyArray<{ readonly line: number; readonly reason: string }>
}

/** @since 0.1.0 @category models */
export interface LoadOptions {
  readonly snapshotId: string
  /** The date the file was retrieved from its publisher (YYYY-MM-DD), kept as provenance. */
  readonly retrievedOn: string
  readonly batchSize?: number
  readonly onProgress?: (progress: { readonly file: string; readonly rows: number }) => Effect.Effect<void>
}

let references: Effect.Effect<DenueReferences, LoadFailed> | undefined

/** Catalogs are read once per process: the SCIAN fixture alone is 3 MB. */
const denueReferences = (): Effect.Effect<DenueReferences, LoadFailed> => {
  if (references === undefined) {
    references = Effect.cached(
      Effect.all({ scian: loadScian(), municipalities: loadMunicipalities() }).pipe(
        Effect.mapError((error) => new LoadFailed({ file: "catalogs", reason: error.message }))
      )
    ).pipe(Effect.runSync)
  }
  return references
}

/**
 * Streams a DENUE file into the snapshot.
 *
 * @since 0.1.0 @category loaders
 */
export const loadDenue = (
  path: string,
  options: LoadOptions
): Effect.Effect<LoadReport, LoadFailed | SnapshotNotLoading, SqlClient.SqlClient | Corpus | Crypto> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const corpus = yield* Corpus
    const crypto = yield* Crypto
    const refs = yield* denueReferences()
    const file = basename(path)
    yield* corpus.registerSource(denueSource)
    yield* corpus.assertLoading(options.snapshotId)

    const insertBatch = (rows: ReadonlyArray<DenueObservation>) =>
      Effect.gen(function*() {
        if (rows.length === 0) return 0
        const records = yield* Effect.forEach(rows, (row) =>
          Effect.map(crypto.fingerprint("supplier_observation", `${denueSource.slug}:${row.sourceRecordId}`), (fingerprint) => ({
            source_record_id: row.sourceRecordId,
            fingerprint,
            name: row.name,
            legal_name: row.legalName,
            name_norm: normalizeName(row.name),
            scian_code: row.scianCode,
            scian_title: row.scianTitle,
            state_code: row.stateCode,
            municipality_code: row.municipalityCode,
            municipality_name: row.municipalityCode === null
              ? null
              : (municipalityByCode(refs.municipalities, row.municipalityCode)?.name ?? null),
            employment_band: row.employmentBand,
            establishment_type: row.establishmentType,
            incorporated_on: row.incorporatedOn,
            has_phone: row.hasPhone,
            has_email: row.hasEmail,
            has_website: row.hasWebsite,
            contact: row.contact
          })))
        const inserted = yield* sql<{ n: number }>`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS r(
              source_record_id text, fingerprint text, name text, legal_name text, name_norm text, scian_code text,
              scian_title text, state_code text, municipality_code text, municipality_name text, employment_band text,
              establishment_type text, incorporated_on text, has_phone boolean, has_email boolean, has_website boolean,
              contact jsonb)
          ), ins AS (
            INSERT INTO market.supplier_observations (
              snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, name, legal_name, name_norm,
              scian_code, scian_title, state_code, municipality_code, municipality_name, employment_band,
              establishment_type, incorporated_on, has_phone, has_email, has_website, contact, search_tsv)
            SELECT ${options.snapshotId}, ${denueSource.slug}, source_record_id, ${options.retrievedOn}::date, fingerprint,
              name, legal_name, name_norm, scian_code, scian_title, state_code, municipality_code, municipality_name,
              employment_band, establishment_type, incorporated_on, has_phone, has_email, has_website, contact,
              setweight(to_tsvector('market.es', coalesce(name, '') || ' ' || coalesce(legal_name, '')), 'A') ||
              setweight(to_tsvector('market.es', coalesce(scian_title, '')), 'B')
            FROM input
            ON CONFLICT (snapshot_id, source_slug, source_record_id) DO NOTHING
            RETURNING 1
          )
          SELECT count(*)::int AS n FROM ins`
        return inserted[0]?.n ?? 0
      }).pipe(Effect.orDie)

    const initial: { accepted: number; inserted: number; rejects: ReadonlyArray<{ line: number; reason: string }> } = {
      accepted: 0,
      inserted: 0,
      rejects: []
    }
    const totals = yield* streamDenue(path, refs).pipe(
      Stream.mapError((error) => new LoadFailed({ file, reason: error.message })),
      Stream.grouped(options.batchSize ?? 500),
      Stream.runFoldEffect(
        initial,
        (acc, chunk) =>
          Effect.gen(function*() {
            const items = Chunk.toReadonlyArray(chunk)
            const rows = items.flatMap((r) => (r._tag === "Row" ? [r.row] : []))
            const rejects = items.flatMap((r) => (r._tag === "Reject" ? [{ line: r.line, reason: r.reason }] : []))
            const inserted = yield* insertBatch(rows)
            yield* corpus.recordRejects(options.snapshotId, denueSource.slug, file, rejects)
            const next = {
              accepted: acc.accepted + rows.length,
              inserted: acc.inserted + inserted,
              rejects: [...acc.rejects, ...rejects]
            }
            if (options.onProgress !== undefined) {
              yield* options.onProgress({ file, rows: next.accepted + next.rejects.length })
            }
            return next
          })
      )
    )
    yield* corpus.recordLoad({
      snapshotId: options.snapshotId,
      sourceSlug: denueSource.slug,
      fileName: file,
      retrievedOn: options.retrievedOn,
      accepted: totals.accepted,
      rejected: totals.rejects.length
    })
    return {
      file,
      sourceSlug: denueSource.slug,
      snapshotId: options.snapshotId,
      accepted: totals.accepted,
      inserted: totals.inserted,
      rejected: totals.rejects.length,
      rejects: totals.rejects
    } satisfies LoadReport
  }).pipe(Effect.withSpan("SupplierLoader.loadDenue", { attributes: { path } }))
