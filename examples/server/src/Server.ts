/**
 * The node HTTP runtime: REST under /api/v1, MCP at /mcp, OpenAPI at /openapi.json, docs at /docs.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayer from "@service/http/HttpLayer"
import * as Projection from "@service/market-contract/Projection"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import * as McpRoute from "./McpRoute.js"

/**
 * Serves the API on a port (0 picks a free one). Needs the domain services (see AppLayer).
 *
 * @since 0.1.0 @category layers
 */
export const layer = (options: { readonly port: number; readonly host: string }) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(McpRoute.layer),
    Layer.provide(HttpLayer.layer),
    Layer.provide(Projection.layerAbstracted),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
