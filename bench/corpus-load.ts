// Load rate of the synthetic corpus through the real load path (Generator.generate → Loader.loadItems), as a
// ratio to a hand-written bulk path measured in the same run, plus the size of the result on disk.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/corpus-load.ts [--scale 1] [--seed 42] [--batch 2000] [--keep] [--no-baseline]
//
// It creates a fresh database bench_corpus_<random> on the DATABASE_URL server, migrates it, derives the
// generator profile from data/mx, then per kind (procedures, awards, suppliers, risk marks, permits):
// 1. loads the generated records through the real path into a loading snapshot (fingerprints, upserts with
//    RETURNING, one transaction per batch, search vectors computed in SQL);
// 2. baseline: writes the same records, in batches of the same size, with plain `pg` into copies of the
//    market tables (`CREATE TABLE baseline.x (LIKE market.x INCLUDING ALL)` plus the same foreign keys, so the
//    same indexes, GIN included, are maintained): `INSERT … SELECT FROM jsonb_to_recordset`, no fingerprints, no
//    upsert, no RETURNING, autocommit, same tsvector expressions.
// Then it publishes the snapshot (Corpus.publish analyzes the tables, counts awards per procedure, computes
// coverage) and reports sizes.
// The database is dropped at the end unless --keep is given.
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as Generator from "@service/market-warehouse/Generator"
import { parseContext } from "@service/market-warehouse/Loader"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import pg from "pg"

type Kind = "supplier_observation" | "opportunity" | "award" | "risk_mark" | "permit"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const scale = Number(option("scale") ?? "1")
const seed = Number(option("seed") ?? "42")
const batchSize = Number(option("batch") ?? String(Generator.defaultBatchSize))
const keep = args.includes("--keep")
const withBaseline = !args.includes("--no-baseline")
const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "") {
  console.error("DATABASE_URL is required (the server the benchmark creates its database on).")
  process.exit(2)
}
if (!(scale > 0) || !Number.isInteger(seed) || !(batchSize >= 2)) {
  console.error("usage: npx tsx bench/corpus-load.ts [--scale 1] [--seed 42] [--batch 2000] [--keep] [--no-baseline]")
  process.exit(2)
}

const database = `bench_corpus_${randomBytes(4).toString("hex")}`
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()

const tables: Readonly<Record<Kind, string>> = {
  supplier_observation: "supplier_observations",
  opportunity: "opportunities",
  award: "awards",
  risk_mark: "risk_marks",
  permit: "permits"
}

// ---------------------------------------------------------------------------
// Baseline: the same rows through plain pg.

const fold = (s: string): string => s.normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase()
const tsv = (a: string, b: string) =>
  `setweight(to_tsvector('market.es', ${a}), 'A') || setweight(to_tsvector('market.es', ${b}), 'B')`

/** INSERT … SELECT FROM jsonb_to_recordset per kind; $1 = rows, $2 = snapshot, $3 = retrieval date. */
const baselineSql: Readonly<Record<Kind, string>> = {
  supplier_observation: `INSERT INTO baseline.supplier_observations (snapshot_id, source_slug, source_record_id, retrieved_on,
      fingerprint, name, legal_name, name_norm, rfc, scian_code, scian_title, state_code, municipality_code, municipality_name,
      employment_band, establishment_type, incorporated_on, has_phone, has_email, has_website, contact, search_tsv)
    SELECT $2, 'synthetic', r."sourceRecordId", $3::date, '', r.name, r."legalName", r.name_norm, r.rfc, r."scianCode",
      r."scianTitle", r."stateCode", r."municipalityCode", r.municipality_name, r."employmentBand", r."establishmentType",
      r."incorporatedOn", r."hasPhone", r."hasEmail", r."hasWebsite", r.contact,
      ${tsv(`coalesce(r.name, '') || ' ' || coalesce(r."legalName", '')`, `coalesce(r."scianTitle", '')`)}
    FROM jsonb_to_recordset($1::jsonb) AS r("sourceRecordId" text, name text, "legalName" text, name_norm text, rfc text,
      "scianCode" text, "scianTitle" text, "stateCode" text, "municipalityCode" text, municipality_name text,
      "employmentBand" text, "establishmentType" text, "incorporatedOn" text, "hasPhone" boolean, "hasEmail" boolean,
      "hasWebsite" boolean, contact jsonb)`,
  opportunity: `INSERT INTO baseline.opportunities (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, title,
      description, buyer_name, buyer_acronym, procedure_type, procedure_type_text, contracting_type, status_text, is_open,
      actionability, actionability_reason, published_on, tender_start_on, tender_end_on, state_code, cog_partidas, amount,
      currency, search_tsv)
    SELECT $2, 'synthetic', r."sourceRecordId", $3::date, '', r.title, r.description, r."buyerName", r."buyerAcronym",
      r."procedureType", r."procedureTypeText", r."contractingType", r."statusText", r."isOpen", r.actionability,
      r."actionabilityReason", r."publishedOn"::date, r."tenderStartOn"::date, r."tenderEndOn"::date, r."stateCode",
      ARRAY(SELECT jsonb_array_elements_text(r."cogPartidas")), r.amount::numeric, r.currency,
      ${tsv(`coalesce(r.title, '')`, `coalesce(r.description, '') || ' ' || coalesce(r."buyerName", '')`)}
    FROM jsonb_to_recordset($1::jsonb) AS r("sourceRecordId" text, title text, description text, "buyerName" text,
      "buyerAcronym" text, "procedureType" text, "procedureTypeText" text, "contractingType" text, "statusText" text,
      "isOpen" boolean, actionability text, "actionabilityReason" text, "publishedOn" text, "tenderStartOn" text,
      "tenderEndOn" text, "stateCode" text, "cogPartidas" jsonb, amount text, currency text)`,
  award: `INSERT INTO baseline.awards (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint,
      opportunity_source_record_id, title, supplier_rfc, supplier_name, supplier_name_norm, supplier_size, buyer_name,
      buyer_acronym, procedure_type, contracting_type, award_date, amount, currency, currency_reported, amount_scope,
      cog_partidas, state_code, search_tsv)
    SELECT $2, 'synthetic', r."sourceRecordId", $3::date, '', r."opportunitySourceRecordId", r.title, r."supplierRfc",
      r."supplierName", r.supplier_name_norm, r."supplierSize", r."buyerName", r."buyerAcronym", r."procedureType",
      r."contractingType", r."awardDate"::date, r.amount::numeric, r.currency, r."currencyReported", r."amountScope",
      ARRAY(SELECT jsonb_array_elements_text(r."cogPartidas")), r."stateCode",
      ${tsv(`coalesce(r."supplierName", '')`, `coalesce(r.title, '') || ' ' || coalesce(r."buyerName", '')`)}
    FROM jsonb_to_recordset($1::jsonb) AS r("sourceRecordId" text, "opportunitySourceRecordId" text, title text,
      "supplierRfc" text, "supplierName" text, supplier_name_norm text, "supplierSize" text, "buyerName" text,
      "buyerAcronym" text, "procedureType" text, "contractingType" text, "awardDate" text, amount text, currency text,
      "currencyReported" text, "amountScope" text, "cogPartidas" jsonb, "stateCode" text)`,
  risk_mark: `INSERT INTO baseline.risk_marks (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, kind,
      legal_basis, subject_rfc, subject_name, subject_name_norm, status, status_text, listed_on, stage_dates,
      sanctioning_body, case_id, sanction_type, period, fine_amount, fine_currency)
    SELECT $2, 'synthetic', r."sourceRecordId", $3::date, '', r.kind, r."legalBasis", r."subjectRfc", r."subjectName",
      r.subject_name_norm, r.status, r."statusText", r."listedOn"::date, r."stageDates", r."sanctioningBody", r."caseId",
      r."sanctionType", r.period, r."fineAmount"::numeric, r."fineCurrency"
    FROM jsonb_to_recordset($1::jsonb) AS r("sourceRecordId" text, kind text, "legalBasis" text, "subjectRfc" text,
      "subjectName" text, subject_name_norm text, status text, "statusText" text, "listedOn" text, "stageDates" jsonb,
      "sanctioningBody" text, "caseId" text, "sanctionType" text, period text, "fineAmount" text, "fineCurrency" text)`,
  permit: `INSERT INTO baseline.permits (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, permit_number,
      holder_name, holder_name_norm, holder_rfc, plant_name, permit_type, status_text, is_active_risk, is_terminated,
      is_expansion, investment_mdd, capacity_mw, estimated_generation, fuel, technology, state_code, granted_on,
      operation_start_text, ended_on)
    SELECT $2, 'synthetic', r."sourceRecordId", $3::date, '', r."permitNumber", r."holderName", r.holder_name_norm,
      r."holderRfc", r."plantName", r."permitType", r."statusText", r."isActiveRisk", r."isTerminated", r."isExpansion",
      r."investmentMdd"::numeric, r."capacityMw"::numeric, r."estimatedGeneration"::numeric, r.fuel, r.technology,
      r."stateCode", r."grantedOn"::date, r."operationStartText", r."endedOn"::date
    FROM jsonb_to_recordset($1::jsonb) AS r("sourceRecordId" text, "permitNumber" text, "holderName" text,
      holder_name_norm text, "holderRfc" text, "plantName" text, "permitType" text, "statusText" text,
      "isActiveRisk" boolean, "isTerminated" boolean, "isExpansion" boolean, "investmentMdd" text, "capacityMw" text,
      "estimatedGeneration" text, fuel text, technology text, "stateCode" text, "grantedOn" text,
      "operationStartText" text, "endedOn" text)`
}

/** The generated record with the derived columns the loader also computes (name keys, municipality name). */
const baselineRow = (plan: Generator.GeneratorPlan, kind: Kind, i: number, municipality: (code: string) => string | null): object => {
  const item = Generator.itemAt(plan, kind, i)
  switch (item._tag) {
    case "SupplierObservation":
      return {
        ...item.record,
        name_norm: fold(item.record.name),
        municipality_name: item.record.municipalityCode === null ? null : municipality(item.record.municipalityCode)
      }
    case "Award":
      return { ...item.record, supplier_name_norm: fold(item.record.supplierName) }
    case "RiskMark":
      return { ...item.record, subject_name_norm: fold(item.record.subjectName) }
    case "Permit":
      return { ...item.record, holder_name_norm: fold(item.record.holderName) }
    case "Opportunity":
      return item.record
  }
}

const prepareBaseline = async (client: pg.Client) => {
  await client.query("CREATE SCHEMA baseline")
  for (const table of Object.values(tables)) {
    await client.query(`CREATE TABLE baseline.${table} (LIKE market.${table} INCLUDING ALL)`)
    await client.query(`ALTER TABLE baseline.${table} ADD FOREIGN KEY (snapshot_id) REFERENCES market.snapshots(id) ON DELETE CASCADE`)
    await client.query(`ALTER TABLE baseline.${table} ADD FOREIGN KEY (source_slug) REFERENCES market.sources(slug)`)
  }
}

const runBaseline = async (
  client: pg.Client,
  plan: Generator.GeneratorPlan,
  kind: Kind,
  snapshotId: string,
  municipality: (code: string) => string | null
): Promise<number> => {
  const records = Math.max(1, Math.floor(batchSize / 2))
  const started = performance.now()
  for (let from = 0; from < plan.counts[kind]; from += records) {
    const end = Math.min(plan.counts[kind], from + records)
    const rows: Array<object> = []
    for (let i = from; i < end; i++) rows.push(baselineRow(plan, kind, i, municipality))
    await client.query(baselineSql[kind], [JSON.stringify(rows), snapshotId, plan.retrievedOn])
  }
  return (performance.now() - started) / 1000
}

// ---------------------------------------------------------------------------
// Output

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const row of rows) console.log(line(row))
}

// ---------------------------------------------------------------------------
// Run

const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})

interface KindResult {
  readonly kind: Kind
  readonly rows: number
  readonly seconds: number
  readonly baselineSeconds: number | null
  readonly generateOnlySeconds: number
}

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  console.log(`database ${database}; scale ${scale}, seed ${seed}, batch ${batchSize} items (${Math.floor(batchSize / 2)} records)`)
  const client = new pg.Client({ connectionString: benchUrl })
  try {
    const services = Layer.mergeAll(Corpus.layer, crypto).pipe(
      Layer.provideMerge(Database.layerPgWith({ url: Redacted.make(benchUrl) }))
    )
    const program = Effect.gen(function*() {
      yield* Migrations.run(App.migrations)
      const profileStarted = performance.now()
      const profile = yield* Generator.deriveProfile
      const profileSeconds = (performance.now() - profileStarted) / 1000
      const plan = yield* Generator.makePlan(profile, { seed, scale })
      const context = yield* parseContext()
      const municipality = (code: string) => context.municipalities.byCode.get(code)?.name ?? null
      const corpus = yield* Corpus.Corpus
      const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
      yield* Effect.promise(() => client.connect())
      if (withBaseline) yield* Effect.promise(() => prepareBaseline(client))
      const results: Array<KindResult> = []
      for (const kind of Generator.loadOrder) {
        // Generation alone, on the first 100,000 records, extrapolated: what the load path cannot go below.
        const probe = Math.min(plan.counts[kind], 100_000)
        const genStarted = performance.now()
        for (let i = 0; i < probe; i++) Generator.itemAt(plan, kind, i)
        const generateOnlySeconds = (performance.now() - genStarted) / 1000 * (plan.counts[kind] / probe)
        let last = 0
        const result = yield* Generator.generate({
          scale,
          seed,
          snapshotId,
          batchSize,
          profile,
          kinds: [kind],
          onProgress: ({ kind, rows, total }) =>
            Effect.sync(() => {
              if (rows - last >= 100_000 || rows === total) {
                last = rows
                process.stderr.write(`  ${kind}: ${fmt(rows)} / ${fmt(total)}\n`)
              }
            })
        })
        const load = result.loads[0]
        const seconds = (load?.millis ?? 0) / 1000
        const baselineSeconds = withBaseline
          ? yield* Effect.promise(() => runBaseline(client, plan, kind, snapshotId, municipality))
          : null
        results.push({ kind, rows: plan.counts[kind], seconds, baselineSeconds, generateOnlySeconds })
        process.stderr.write(
          `  ${kind}: load path ${seconds.toFixed(1)} s${baselineSeconds === null ? "" : `, baseline ${baselineSeconds.toFixed(1)} s`}\n`
        )
      }
      const publishStarted = performance.now()
      yield* corpus.publish(snapshotId)
      const publishSeconds = (performance.now() - publishStarted) / 1000
      return { results, publishSeconds, profileSeconds }
    })
    const { profileSeconds, publishSeconds, results } = await Effect.runPromise(
      program.pipe(Effect.provide(services), Logger.withMinimumLogLevel(LogLevel.Warning))
    )

    const sizes = await client.query<{ name: string; market: string; baseline: string | null }>(
      `SELECT t AS name, pg_total_relation_size(('market.' || t)::regclass)::text AS market,
              CASE WHEN to_regclass('baseline.' || t) IS NULL THEN NULL
                   ELSE pg_total_relation_size(('baseline.' || t)::regclass)::text END AS baseline
       FROM unnest($1::text[]) AS t`,
      [Object.values(tables)]
    )
    const databaseSize = await client.query<{ bytes: string }>("SELECT pg_database_size(current_database())::text AS bytes")
    const sizeOf = new Map(sizes.rows.map((r) => [r.name, r]))

    console.log()
    console.log(`Load rate (profile derived in ${profileSeconds.toFixed(1)} s, reused for every kind)`)
    const total = results.reduce(
      (acc, r) => ({
        rows: acc.rows + r.rows,
        seconds: acc.seconds + r.seconds,
        baseline: acc.baseline + (r.baselineSeconds ?? 0),
        gen: acc.gen + r.generateOnlySeconds
      }),
      { rows: 0, seconds: 0, baseline: 0, gen: 0 }
    )
    const rowsOut = results.map((r) => {
      const size = sizeOf.get(tables[r.kind])
      return [
        r.kind,
        fmt(r.rows),
        r.seconds.toFixed(1),
        fmt(r.rows / r.seconds),
        r.baselineSeconds === null ? "-" : fmt(r.rows / r.baselineSeconds),
        r.baselineSeconds === null ? "-" : `${(r.seconds / r.baselineSeconds).toFixed(2)}x`,
        fmt(r.rows / r.generateOnlySeconds),
        mb(Number(size?.market ?? 0)),
        size?.baseline === null || size?.baseline === undefined ? "-" : mb(Number(size.baseline))
      ]
    })
    rowsOut.push([
      "total",
      fmt(total.rows),
      total.seconds.toFixed(1),
      fmt(total.rows / total.seconds),
      withBaseline ? fmt(total.rows / total.baseline) : "-",
      withBaseline ? `${(total.seconds / total.baseline).toFixed(2)}x` : "-",
      fmt(total.rows / total.gen),
      mb(sizes.rows.reduce((a, r) => a + Number(r.market), 0)),
      withBaseline ? mb(sizes.rows.reduce((a, r) => a + Number(r.baseline ?? 0), 0)) : "-"
    ])
    table(
      ["kind", "rows", "seconds", "rows/s", "baseline rows/s", "time vs baseline", "generate-only rows/s", "size (market)", "size (baseline)"],
      rowsOut
    )
    console.log()
    console.log(`publish (analyze, count awards per procedure, coverage): ${publishSeconds.toFixed(1)} s`)
    const end = total.seconds + publishSeconds
    console.log(`load path + publish: ${end.toFixed(1)} s for ${fmt(total.rows)} rows = ${fmt(total.rows / end)} rows/s`)
    console.log(`pg_database_size: ${mb(Number(databaseSize.rows[0]?.bytes ?? 0))} (includes the baseline copy when present)`)
    console.log("Sizes are pg_total_relation_size (heap + indexes + TOAST), after publish.")
  } finally {
    await client.end().catch(() => undefined)
    if (keep) {
      console.log(`kept database ${database}`)
    } else {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    }
    await admin.end()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
