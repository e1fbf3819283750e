/**
 * @since 0.1.0
 */
export * as ContactOperations from "./ContactOperations.js"
export * as ContactProvider from "./ContactProvider.js"
export * as ContactsBundle from "./ContactsBundle.js"
export * as ContactsMigrations from "./ContactsMigrations.js"
export * as ContactsRefusal from "./ContactsRefusal.js"
export * as Quotes from "./Quotes.js"
export * as SandboxProvider from "./SandboxProvider.js"
export * as Unlocks from "./Unlocks.js"
