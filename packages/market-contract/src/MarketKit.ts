/**
 * What every market-data declaration shares: the market refusal codec, the read scopes, read-only annotations,
 * and one insight credit per successful call (the free discovery routes say `metered: false`).
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import { readScopes } from "./internal/fields.js"
import { codec } from "./MarketError.js"

/** @since 0.1.0 @category kits */
export const kit = Operation.kit({ refusals: codec, scopes: readScopes, annotations: Operation.readOnly, metered: true })
