/**
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"
export * as Failure from "./Failure.js"
export * as Format from "./Format.js"
