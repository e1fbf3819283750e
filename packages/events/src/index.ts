/**
 * @since 0.1.0
 */
export * as Catalog from "./Catalog.js"
