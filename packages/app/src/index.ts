/**
 * @since 0.1.0
 */
export * as App from "./App.js"
