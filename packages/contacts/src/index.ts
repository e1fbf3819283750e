/**
 * @since 0.1.0
 */
export * as ContactProvider from "./ContactProvider.js"
export * as SandboxProvider from "./SandboxProvider.js"
