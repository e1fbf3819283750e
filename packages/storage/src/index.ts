/**
 * Database layers, migration runner and test database helpers.
 *
 * @since 0.0.0
 */

/**
 * PostgreSQL and embedded PGlite layers.
 *
 * @since 0.0.0
 */
export * as Database from "./Database.js"

/**
 * Dependency-ordered migration runner.
 *
 * @since 0.0.0
 */
export * as Migrations from "./Migrations.js"

/**
 * `LISTEN`/`NOTIFY` on both engines, for caches that forget what another node changed.
 *
 * @since 0.1.0
 */
export * as Notifications from "./Notifications.js"

/**
 * Isolated databases for tests.
 *
 * @since 0.0.0
 */
export * as TestDatabase from "./TestDatabase.js"
