/**
 * Page limits of the market-data contract, in one place: the input schemas, the queries, capabilities and
 * the docs read them from here.
 *
 * @since 0.1.0
 */

/** Default page size of search-shaped operations. @since 0.1.0 @category constants */
export const defaultPageSize = 20

/** Maximum page size of search-shaped operations. @since 0.1.0 @category constants */
export const maxPageSize = 50

/** Default page size of aggregate_awards. @since 0.1.0 @category constants */
export const defaultAggregatePageSize = 50

/** Maximum page size of aggregate_awards. @since 0.1.0 @category constants */
export const maxAggregatePageSize = 200
