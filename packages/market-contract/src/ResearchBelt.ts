/**
 * The research belt's own projection: in-process only (never HTTP, OAuth, MCP or CLI), it opens up to 50
 * already-selected supplier observations in one call, with their internal provenance. Contact coordinates stay
 * behind the contact quote/unlock flow. Invalid, unavailable and unlicensed references are indistinguishable:
 * all answer `invalid_or_unavailable`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import { WarehouseReader } from "@service/market-warehouse/WarehouseReader"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { openRecordRef } from "./internal/refs.js"
import { contactPresenceOf, stateOf, SUPPLIER_COLUMNS, SupplierDbRow } from "./internal/supplierRows.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import { Projection } from "./Projection.js"

/** @since 0.1.0 @category constants */
export const MAX_BATCH = 50

/** @since 0.1.0 @category models */
export const BeltObservation = Schema.Struct({
  record_fingerprint: Schema.String,
  name: Schema.String,
  legal_name: Schema.NullOr(Schema.String),
  rfc: Schema.NullOr(Schema.String),
  scian_code: Schema.NullOr(Schema.String),
  scian_title: Schema.NullOr(Schema.String),
  state: Schema.NullOr(Schema.Struct({ code: Schema.String, name: Schema.String })),
  municipality: Schema.NullOr(Schema.Struct({ code: Schema.String, name: Schema.NullOr(Schema.String) })),
  employment_band: Schema.NullOr(Schema.String),
  contact_presence: Schema.Struct({ has_phone: Schema.Boolean, has_email: Schema.Boolean, has_website: Schema.Boolean }),
  internal_provenance: Schema.Struct({
    source_slug: Schema.String,
    source_record_id: Schema.String,
    publisher: Schema.String,
    licence: Schema.String,
    retrieved_on: Schema.String,
    corpus_snapshot: Schema.String
  })
})
/** @since 0.1.0 @category models */
export type BeltObservation = typeof BeltObservation.Type

/** @since 0.1.0 @category models */
export type BeltEntry =
  | { readonly record_ref: string; readonly status: "opened"; readonly observation: BeltObservation }
  | { readonly record_ref: string; readonly status: "invalid_or_unavailable" }

/** @since 0.1.0 @category tags */
export class ResearchBelt extends Context.Tag("@service/market-contract/ResearchBelt")<
  ResearchBelt,
  {
    /** One entry per requested ref, in request order. More than 50 refs is refused whole, never truncated. */
    readonly openSuppliers: (refs: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<BeltEntry>, MarketDataRefusal>
  }
>() {}

const Row = SupplierDbRow.pipe(Schema.extend(Schema.Struct({
  source_slug: Schema.String,
  source_record_id: Schema.String,
  publisher: Schema.String,
  licence: Schema.String,
  retrieved_on: Schema.String
})))

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const projection = yield* Projection
  if (projection.kind !== "research_belt") {
    // A wiring mistake, not a caller's: only the belt runtime may construct this service.
    return yield* Effect.dieMessage("ResearchBelt requires the research_belt projection")
  }
  const sql = yield* SqlClient.SqlClient
  const corpus = yield* WarehouseReader
  const crypto = yield* Crypto

  const openSuppliers = (refs: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (refs.length > MAX_BATCH) {
        return yield* refuse(
          "batch_too_large",
          `The belt opens at most ${MAX_BATCH} observations per call; ${refs.length} were sent.`,
          `Split the selection into batches of ${MAX_BATCH} or fewer.`
        )
      }
      const active = yield* corpus.active
      const opened = yield* Effect.forEach(refs, (ref) =>
        openRecordRef(ref, "supplier").pipe(Effect.provideService(Crypto, crypto), Effect.option))
      const wanted = opened.flatMap((o) => (Option.isSome(o) ? [o.value] : []))
      const rows = Option.isNone(active) || wanted.length === 0 ? [] : yield* sql`
        SELECT ${sql.literal(SUPPLIER_COLUMNS)}, o.source_slug, o.source_record_id, s.publisher, s.licence,
               o.retrieved_on::text AS retrieved_on
        FROM market.supplier_observations o JOIN market.sources s ON s.slug = o.source_slug
        WHERE o.snapshot_id = ${active.value.snapshotId} AND s.licensed_for_display
          AND o.fingerprint IN ${sql.in(wanted.map((w) => w.fingerprint))}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))),
        Effect.orDie
      )
      const byFingerprint = new Map(rows.map((row) => [row.fingerprint, row]))
      return refs.map((ref, i): BeltEntry => {
        const payload = opened[i]
        const row = payload === undefined || Option.isNone(payload) ? undefined : byFingerprint.get(payload.value.fingerprint)
        if (row === undefined) return { record_ref: ref, status: "invalid_or_unavailable" }
        return {
          record_ref: ref,
          status: "opened",
          observation: {
            record_fingerprint: row.fingerprint,
            name: row.name,
            legal_name: row.legal_name,
            rfc: row.rfc,
            scian_code: row.scian_code,
            scian_title: row.scian_title,
            state: stateOf(row),
            municipality: row.municipality_code === null ? null : { code: row.municipality_code, name: row.municipality_name },
            employment_band: row.employment_band,
            contact_presence: contactPresenceOf(row),
            internal_provenance: {
              source_slug: row.source_slug,
              source_record_id: row.source_record_id,
              publisher: row.publisher,
              licence: row.licence,
              retrieved_on: row.retrieved_on,
              corpus_snapshot: row.snapshot_id
            }
          }
        }
      })
    }).pipe(Effect.withSpan("ResearchBelt.openSuppliers", { captureStackTrace: false }))

  return ResearchBelt.of({ openSuppliers })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<ResearchBelt, never, SqlClient.SqlClient | WarehouseReader | Crypto | Projection> = Layer.effect(
  ResearchBelt,
  make
)
