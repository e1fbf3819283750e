/**
 * @since 0.1.0
 */
export * as Amounts from "./Amounts.js"
export * as Catalogs from "./Catalogs.js"
export * as Corpus from "./Corpus.js"
export * as DataFiles from "./DataFiles.js"
export * as DemoCorpus from "./DemoCorpus.js"
export * as EvidenceCategory from "./EvidenceCategory.js"
export * as Generator from "./Generator.js"
export * as Loader from "./Loader.js"
export * as MarketMigrations from "./MarketMigrations.js"
export * as Municipalities from "./Municipalities.js"
export * as Parsers from "./Parsers.js"
export * as Rfc from "./Rfc.js"
export * as States from "./States.js"
export * as Text from "./Text.js"
export * as WarehouseLayer from "./WarehouseLayer.js"
export * as WarehouseReader from "./WarehouseReader.js"
