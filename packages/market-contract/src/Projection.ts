/**
 * The projection a runtime serves. It is chosen by the entrypoint as a layer; no request field can select or
 * widen it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/** @since 0.1.0 @category models */
export type ProjectionKind = "abstracted" | "research_belt"

/** @since 0.1.0 @category tags */
export class Projection extends Context.Tag("@service/market-contract/Projection")<
  Projection,
  { readonly kind: ProjectionKind }
>() {}

/**
 * HTTP, MCP and CLI: record refs, fingerprints, categories and contact presence only.
 *
 * @since 0.1.0 @category layers
 */
export const layerAbstracted: Layer.Layer<Projection> = Layer.succeed(Projection, { kind: "abstracted" })

/**
 * The in-process research belt: may also open already-selected observations in batches.
 *
 * @since 0.1.0 @category layers
 */
export const layerResearchBelt: Layer.Layer<Projection> = Layer.succeed(Projection, { kind: "research_belt" })
