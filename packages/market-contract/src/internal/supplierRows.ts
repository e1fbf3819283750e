import { stateByCode } from "@service/market-warehouse/States"
import * as Schema from "effect/Schema"
import { riskSummaryDbFields } from "./riskSummaries.js"

/** A supplier observation as read from the warehouse (the columns of SUPPLIER_COLUMNS). */
export const SupplierDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  name: Schema.String,
  legal_name: Schema.NullOr(Schema.String),
  name_norm: Schema.String,
  rfc: Schema.NullOr(Schema.String),
  scian_code: Schema.NullOr(Schema.String),
  scian_title: Schema.NullOr(Schema.String),
  state_code: Schema.NullOr(Schema.String),
  municipality_code: Schema.NullOr(Schema.String),
  municipality_name: Schema.NullOr(Schema.String),
  employment_band: Schema.NullOr(Schema.String),
  establishment_type: Schema.NullOr(Schema.String),
  incorporated_on: Schema.NullOr(Schema.String),
  has_phone: Schema.Boolean,
  has_email: Schema.Boolean,
  has_website: Schema.Boolean,
  /** The first ordering key of a search (text rank or normalized name), for its cursor position. */
  sort_key: Schema.optional(Schema.NullOr(Schema.Union(Schema.Number, Schema.String)))
})
export type SupplierDbRow = typeof SupplierDbRow.Type

/** A served supplier observation: SUPPLIER_COLUMNS plus its RFC's risk summary (RISK_SUMMARY_COLUMNS, joined). */
export const SupplierRiskDbRow = Schema.Struct({ ...SupplierDbRow.fields, ...riskSummaryDbFields })
export type SupplierRiskDbRow = typeof SupplierRiskDbRow.Type
export const decodeSupplierRows = Schema.decodeUnknown(Schema.Array(SupplierRiskDbRow))

/** The columns every supplier read selects: nothing else leaves the table through this service. */
export const SUPPLIER_COLUMNS = `o.id::text AS id, o.snapshot_id, o.fingerprint, o.name, o.legal_name, o.name_norm, o.rfc,
  o.scian_code, o.scian_title, o.state_code, o.municipality_code, o.municipality_name, o.employment_band,
  o.establishment_type, o.incorporated_on, o.has_phone, o.has_email, o.has_website`


/** The state of a row as a code and name (the code when the catalog does not know it). */
export const stateOf = (row: SupplierDbRow): { readonly code: string; readonly name: string } | null =>
  row.state_code === null ? null : { code: row.state_code, name: stateByCode(row.state_code)?.name ?? row.state_code }

/** Which contact channels were published: presence only, never a coordinate. */
export const contactPresenceOf = (row: SupplierDbRow) => ({
  has_phone: row.has_phone,
  has_email: row.has_email,
  has_website: row.has_website
})
