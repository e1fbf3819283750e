/**
 * @since 0.1.0
 */
export * as Capabilities from "./Capabilities.js"
export * as Envelope from "./Envelope.js"
export * as MarketData from "./MarketData.js"
export * as MarketBundle from "./MarketBundle.js"
export * as MarketLayer from "./MarketLayer.js"
export * as MarketError from "./MarketError.js"
export * as Operations from "./Operations.js"
export * as Projection from "./Projection.js"
export * as ProjectionAudit from "./ProjectionAudit.js"
export * as ResearchBelt from "./ResearchBelt.js"
export * as Suppliers from "./Suppliers.js"
export * as Validation from "./Validation.js"
