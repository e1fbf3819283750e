/**
 * @since 0.1.0
 */
export * as Call from "./Call.js"
export * as Client from "./Client.js"
export * as ClientError from "./ClientError.js"
export * as Paging from "./Paging.js"
export * as PromiseClient from "./PromiseClient.js"
