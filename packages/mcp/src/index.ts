/**
 * MCP tools derived from the operation groups of any domain, served with the official SDK v2.
 *
 * @since 0.1.0
 */

/**
 * The web handler (HTTP, both protocol eras, batches capped) and the stdio server.
 *
 * @since 0.1.0
 */
export * as McpHandler from "./McpHandler.js"

/**
 * Extra JSON-RPC methods served next to the tools.
 *
 * @since 0.1.0
 */

/**
 * One tool per operation served on MCP, from any list of groups.
 *
 * @since 0.1.0
 */
export * as Toolkit from "./Toolkit.js"
