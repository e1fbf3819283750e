/**
 * Discovery: what each operation answers, requires and refuses, how to call it, and which filter values the
 * published corpus actually holds.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CorpusBasis, CoverageDeclaration } from "./Envelope.js"

/** @since 0.1.0 @category constants */
export const OPENAPI_URL = "/openapi.json"

/**
 * The corpus dimensions capabilities can list, each with the values the active publication holds (the filter
 * values that answer something).
 *
 * @since 0.1.0 @category models
 */
export const Facet = Schema.Literal(
  "states",
  "scian_codes",
  "evidence_categories",
  "procedure_types",
  "currencies",
  "amount_scopes",
  "mark_kinds"
)
/** @since 0.1.0 @category models */
export type Facet = typeof Facet.Type

/** @since 0.1.0 @category constants */
export const facets: ReadonlyArray<Facet> = Facet.literals

/** @since 0.1.0 @category models */
export const CapabilitiesInput = Schema.Struct({
  facets: Schema.optional(Schema.String).annotations({
    description: `Comma-separated corpus dimensions to compute: ${Facet.literals.join(", ")} (default: all).`
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "CapabilitiesInput" })
/** @since 0.1.0 @category models */
export type CapabilitiesInput = typeof CapabilitiesInput.Type

/** @since 0.1.0 @category models */
export const OperationCapability = Schema.Struct({
  operation: Schema.String,
  question: Schema.String,
  requires: Schema.String,
  refuses: Schema.Array(Schema.String).annotations({ description: "The semantic codes this operation may return." }),
  method: Schema.Literal("GET", "POST", "PUT", "PATCH", "DELETE"),
  path: Schema.String,
  metered: Schema.Boolean,
  paginates: Schema.Boolean,
  mcpTool: Schema.String,
  example: Schema.Struct({
    input: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    cli: Schema.String
  })
})
/** @since 0.1.0 @category models */
export type OperationCapability = typeof OperationCapability.Type

/** @since 0.1.0 @category models */
export const ObservedValueList = Schema.Struct({
  values: Schema.Array(Schema.Struct({ value: Schema.String, label: Schema.NullOr(Schema.String), visibleRows: Schema.Number })),
  corpusBasis: CorpusBasis
})

/** @since 0.1.0 @category models */
export const CapabilitiesResult = Schema.Struct({
  operations: Schema.Array(OperationCapability),
  observedValues: Schema.partial(Schema.Record({ key: Facet, value: ObservedValueList })).annotations({
    description: "Per requested facet, the values the active publication holds, each list stamped with the corpus basis read."
  }),
  queryModes: Schema.Array(Schema.String),
  limits: Schema.Struct({ defaultPageSize: Schema.Number, maxPageSize: Schema.Number }),
  openapiUrl: Schema.String
}).annotations({ identifier: "CapabilitiesResult" })
/** @since 0.1.0 @category models */
export type CapabilitiesResult = typeof CapabilitiesResult.Type

/** @since 0.1.0 @category models */
export const CompactCapabilities = Schema.Struct({
  schemaVersion: Schema.String,
  operations: Schema.Array(Schema.Struct({ operation: Schema.String, method: Schema.String, path: Schema.String })),
  corpusBasis: Schema.NullOr(CorpusBasis),
  openapiUrl: Schema.String
}).annotations({ identifier: "CompactCapabilities" })
/** @since 0.1.0 @category models */
export type CompactCapabilities = typeof CompactCapabilities.Type

/**
 * The input of operations that take none.
 *
 * @since 0.1.0 @category models
 */
export const NoInput = Schema.Struct({}).annotations({ identifier: "NoInput" })

/** The standalone coverage block (GET coverage). @since 0.1.0 @category models */
export const CoverageResponse = Schema.Struct({
  requestId: Schema.String,
  coverage: Schema.Array(CoverageDeclaration),
  corpusBasis: CorpusBasis
}).annotations({ identifier: "CoverageResponse" })
