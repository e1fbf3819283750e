/**
 * Supplier operations' schemas: inputs, the abstracted supplier row, and results.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { EvidenceCategory } from "./Envelope.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import * as Narrowing from "./SupplierNarrowing.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const TrimmedText = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** @since 0.1.0 @category models */
export const ScianCode = Narrowing.ScianCode

/** @since 0.1.0 @category models */
export const Limit = (max: number) =>
  Schema.Int.pipe(
    Schema.between(1, max, { message: () => `limit must be an integer from 1 to ${max}` })
  )

const searchFields = {
  ...Narrowing.fields,
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(TrimmedText(2048)).annotations({
    description: "page.nextCursor of the previous response, to read the next page with the same filters."
  })
}

/**
 * Canonical search input (HTTP route). `source_slugs` is accepted only here.
 *
 * @since 0.1.0 @category models
 */
export const SearchSuppliersInput = Schema.Struct({
  ...searchFields,
  ...Narrowing.canonicalFields
}).annotations({ ...strict, identifier: "SearchSuppliersInput" })
/** @since 0.1.0 @category models */
export type SearchSuppliersInput = typeof SearchSuppliersInput.Type

/**
 * Model-facing search input (MCP, CLI): no source selection.
 *
 * @since 0.1.0 @category models
 */
export const SearchSuppliersModelInput = Schema.Struct(searchFields).annotations({
  ...strict,
  identifier: "SearchSuppliersModelInput"
})

/** @since 0.1.0 @category models */
export const GetSupplierInput = Schema.Struct({
  record_ref: TrimmedText(2048).annotations({ description: "A record_ref copied verbatim from a search row." })
}).annotations({ ...strict, identifier: "GetSupplierInput" })
/** @since 0.1.0 @category models */
export type GetSupplierInput = typeof GetSupplierInput.Type

const CodeName = Schema.Struct({ code: Schema.String, name: Schema.String })

/**
 * A supplier observation in the abstracted projection: identity handles, what was published about the
 * establishment, and contact presence only (never a coordinate).
 *
 * @since 0.1.0 @category models
 */
export const SupplierRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  name: Schema.String,
  legal_name: Schema.NullOr(Schema.String),
  rfc: Schema.NullOr(Schema.String),
  scian: Schema.NullOr(Schema.Struct({ code: Schema.String, title: Schema.NullOr(Schema.String) })),
  state: Schema.NullOr(CodeName),
  municipality: Schema.NullOr(CodeName),
  employment_band: Schema.NullOr(Schema.String),
  establishment_type: Schema.NullOr(Schema.String),
  incorporated_on: Schema.NullOr(Schema.String).annotations({ description: "Month of incorporation to the source (YYYY-MM)." }),
  contact_presence: Schema.Struct({
    has_phone: Schema.Boolean,
    has_email: Schema.Boolean,
    has_website: Schema.Boolean,
    channel_count: Schema.Number
  })
}).annotations({ identifier: "SupplierRow" })
/** @since 0.1.0 @category models */
export type SupplierRow = typeof SupplierRow.Type
