/**
 * @since 0.1.0
 */
export * as Accounts from "./Accounts.js"
export * as AuthError from "./AuthError.js"
export * as Authenticator from "./Authenticator.js"
export * as Authorization from "./Authorization.js"
export * as CoreMigrations from "./CoreMigrations.js"
export * as Crypto from "./Crypto.js"
export * as Ids from "./Ids.js"
export * as LocalKeys from "./LocalKeys.js"
export * as Principal from "./Principal.js"
export * as RequestContext from "./RequestContext.js"
export * as Workspace from "./Workspace.js"
