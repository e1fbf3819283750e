/**
 * The market-data HTTP group, derived from the operation declarations: method, path, input and output schemas
 * come from each declaration; only the binding to HTTP (body, path or query) is chosen here.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { CompactCapabilities } from "@service/market-contract/Capabilities"
import { CorpusBasis, CoverageDeclaration } from "@service/market-contract/Envelope"
import * as Operations from "@service/market-contract/Operations"
import * as Schema from "effect/Schema"
import {
  Forbidden,
  MarketDataBadRequest,
  MarketDataConflict,
  MarketDataNotFound,
  MarketDataTimeout,
  MarketDataUnavailable,
  WorkspaceNotFound
} from "./ApiError.js"
import { Authentication } from "./Authentication.js"

/** @since 0.1.0 @category constants */
export const basePath = "/api/v1/workspaces/:workspace/market-data" as const

const WorkspacePath = Schema.Struct({ workspace: Schema.String })

const { getSupplier, marketCapabilities, searchSuppliers } = Operations

/** The standalone coverage block (GET coverage). @since 0.1.0 @category models */
export const CoverageResponse = Schema.Struct({
  requestId: Schema.String,
  coverage: Schema.Array(CoverageDeclaration),
  corpusBasis: CorpusBasis
}).annotations({ identifier: "CoverageResponse" })

/**
 * @since 0.1.0 @category api
 */
export class MarketDataGroup extends HttpApiGroup.make("marketData")
  .add(
    HttpApiEndpoint.get(marketCapabilities.name, marketCapabilities.path)
      .setPath(WorkspacePath)
      .setUrlParams(marketCapabilities.input)
      .addSuccess(marketCapabilities.output)
      .annotate(OpenApi.Summary, marketCapabilities.title)
      .annotate(OpenApi.Description, marketCapabilities.description)
  )
  .add(
    HttpApiEndpoint.get("capabilities_compact", "/capabilities/compact")
      .setPath(WorkspacePath)
      .addSuccess(CompactCapabilities)
      .annotate(OpenApi.Summary, "Compact discovery: operations and routes only")
  )
  .add(
    HttpApiEndpoint.get("coverage", "/coverage")
      .setPath(WorkspacePath)
      .addSuccess(CoverageResponse)
      .annotate(OpenApi.Summary, "The coverage block of the active publication, standalone")
  )
  .add(
    HttpApiEndpoint.post(searchSuppliers.name, searchSuppliers.path)
      .setPath(WorkspacePath)
      .setPayload(searchSuppliers.input)
      .addSuccess(searchSuppliers.output)
      .annotate(OpenApi.Summary, searchSuppliers.title)
      .annotate(OpenApi.Description, searchSuppliers.description)
  )
  .add(
    HttpApiEndpoint.get(getSupplier.name, getSupplier.path)
      .setPath(Schema.Struct({ workspace: Schema.String, recordRef: Schema.String }))
      .addSuccess(getSupplier.output)
      .annotate(OpenApi.Summary, getSupplier.title)
      .annotate(OpenApi.Description, getSupplier.description)
  )
  .addError(MarketDataBadRequest, { status: 400 })
  .addError(MarketDataNotFound, { status: 404 })
  .addError(MarketDataConflict, { status: 409 })
  .addError(MarketDataUnavailable, { status: 503 })
  .addError(MarketDataTimeout, { status: 504 })
  .addError(WorkspaceNotFound, { status: 404 })
  .addError(Forbidden, { status: 403 })
  .middleware(Authentication)
  .prefix(basePath)
  .annotate(OpenApi.Title, "Market data")
  .annotate(
    OpenApi.Description,
    "Read-only Mexican commercial intelligence behind a semantic contract. Every success is an envelope declaring coverage and corpus basis."
  )
{}
