/**
 * The service's HTTP API: every group, one OpenAPI document, one typed client.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { MarketDataGroup } from "./MarketDataApi.js"

/** @since 0.1.0 @category api */
export class Api extends HttpApi.make("service")
  .add(MarketDataGroup)
  .annotate(OpenApi.Title, "service API")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Commercial intelligence and CRM platform. Paths carry the /api/v1 prefix; market data lives under /api/v1/workspaces/{workspace}/market-data."
  )
{}
