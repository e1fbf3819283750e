/**
 * The toy domain served on a real listening node server (one per test file).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import * as HttpLayer from "../../src/HttpLayer.js"
import * as ToyDomain from "./ToyDomain.js"

export const layer = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpLayer.layer([ToyDomain.group, ToyDomain.openGroup])),
  Layer.provide(ToyDomain.services),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

export const base = "/api/v1/workspaces/demo/toy"
