/**
 * MCP tools derived from the operation declarations, served with the official SDK v2.
 *
 * @since 0.1.0
 */

/**
 * One tool per market-data operation, registered on an SDK `McpServer`.
 *
 * @since 0.1.0
 */
export * as MarketTools from "./MarketTools.js"

/**
 * The web handler (HTTP, both protocol eras) and the stdio server.
 *
 * @since 0.1.0
 */
export * as McpHandler from "./McpHandler.js"
