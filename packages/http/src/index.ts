/**
 * @since 0.1.0
 */
export * as ApiError from "./ApiError.js"
export * as Authentication from "./Authentication.js"
export * as BodyReader from "./BodyReader.js"
export * as ClientAddress from "./ClientAddress.js"
export * as Curl from "./Curl.js"
export * as GroupApi from "./GroupApi.js"
export * as GroupHandlers from "./GroupHandlers.js"
export * as Health from "./Health.js"
export * as HttpLayer from "./HttpLayer.js"
export * as InputShape from "./InputShape.js"
export * as Mounts from "./Mounts.js"
export * as OpenApiDocument from "./OpenApiDocument.js"
export * as RequestId from "./RequestId.js"
export * as RootIndex from "./RootIndex.js"
export * as Routes from "./Routes.js"
export * as Shaping from "./Shaping.js"
