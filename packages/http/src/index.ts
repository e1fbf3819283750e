/**
 * @since 0.1.0
 */
export * as Api from "./Api.js"
export * as ApiError from "./ApiError.js"
export * as Authentication from "./Authentication.js"
export * as HttpLayer from "./HttpLayer.js"
export * as MarketDataApi from "./MarketDataApi.js"
export * as MarketDataHttp from "./MarketDataHttp.js"
export * as RequestId from "./RequestId.js"
export * as Shaping from "./Shaping.js"
