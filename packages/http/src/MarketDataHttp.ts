/**
 * Handlers of the market-data group: authorize (workspace and scope), provide the request context, run the
 * declared operation and map refusals to their wire class.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { requireScope } from "@service/core/Authorization"
import { CurrentPrincipal } from "@service/core/Principal"
import { RequestContext } from "@service/core/RequestContext"
import { MarketData } from "@service/market-contract/MarketData"
import type { MarketDataRefusal } from "@service/market-contract/MarketError"
import * as Operations from "@service/market-contract/Operations"
import { decodeInput } from "@service/market-contract/Validation"
import * as Effect from "effect/Effect"
import { Api } from "./Api.js"
import { Forbidden, fromRefusal, type MarketDataHttpError, WorkspaceNotFound } from "./ApiError.js"
import * as RequestId from "./RequestId.js"

/**
 * The workspace in the path must be the principal's own; any other slug gets the answer a missing workspace
 * gets, so workspaces cannot be probed.
 */
const authorize = (workspace: string) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const requestId = yield* RequestId.get
    if (principal.workspace.slug !== workspace) {
      return yield* Effect.fail(
        new WorkspaceNotFound({
          code: "NOT_FOUND",
          message: `No workspace "${workspace}" for this credential.`,
          request_id: requestId
        })
      )
    }
    yield* requireScope(principal, Operations.readScopes).pipe(
      Effect.mapError((error) => new Forbidden({ code: "FORBIDDEN", message: error.message, request_id: requestId }))
    )
    return requestId
  })

const serve = <A>(
  workspace: string,
  effect: Effect.Effect<A, MarketDataRefusal, MarketData | RequestContext>
): Effect.Effect<A, MarketDataHttpError | WorkspaceNotFound | Forbidden, MarketData | CurrentPrincipal> =>
  Effect.gen(function*() {
    const requestId = yield* authorize(workspace)
    return yield* effect.pipe(
      Effect.provideService(RequestContext, { requestId, entrypoint: "http" }),
      Effect.mapError((refusal) => fromRefusal(refusal, requestId))
    )
  })

const decodeGetSupplier = decodeInput(Operations.getSupplier.input)

/** @since 0.1.0 @category layers */
export const layer = HttpApiBuilder.group(Api, "marketData", (handlers) =>
  handlers
    .handle("market_capabilities", ({ path, urlParams }) =>
      serve(path.workspace, Operations.marketCapabilities.run(urlParams)))
    .handle("capabilities_compact", ({ path }) => serve(path.workspace, Operations.compactCapabilities))
    .handle("coverage", ({ path }) =>
      serve(
        path.workspace,
        Effect.gen(function*() {
          const market = yield* MarketData
          const { requestId } = yield* RequestContext
          const { coverage, publication } = yield* market.coverage
          return { requestId, coverage, corpusBasis: market.corpusBasis(publication) }
        })
      ))
    .handle("search_suppliers", ({ path, payload }) => serve(path.workspace, Operations.searchSuppliers.run(payload)))
    .handle("get_supplier", ({ path }) =>
      serve(
        path.workspace,
        Effect.flatMap(decodeGetSupplier({ record_ref: path.recordRef }), Operations.getSupplier.run)
      )))
