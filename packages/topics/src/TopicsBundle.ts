/**
 * The topics bundle: the topics service over SQL, its migrations, and the topics and tags groups. It uses the
 * workspace event ledger of a bundle listed before it (the events bundle's) for the `topic.*` catalog events.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import type * as Operation from "@service/core/Operation"
import * as ShareRoutes from "./ShareRoutes.js"
import * as TagOperations from "./TagOperations.js"
import * as TopicOperations from "./TopicOperations.js"
import * as Topics from "./Topics.js"
import * as TopicsErasers from "./TopicsErasers.js"
import * as TopicsFixture from "./TopicsFixture.js"
import * as TopicsIndexCommands from "./TopicsIndexCommands.js"
import * as TopicsMigrations from "./TopicsMigrations.js"

/** What running the topics and tags operations needs. @since 0.1.0 @category models */
export type Requirements = TopicOperations.Requirements | TagOperations.Requirements

const groups: ReadonlyArray<Operation.Group<Requirements>> = [TopicOperations.group, TagOperations.group]

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "topics",
  layer: Topics.layer,
  migrations: [TopicsMigrations.migrations],
  groups,
  mounts: ShareRoutes.mounts,
  operators: [TopicsIndexCommands.operators],
  fixture: TopicsFixture.fixture,
  erasers: TopicsErasers.erasers
})
