/**
 * @since 0.1.0
 */
export * as Anchors from "./Anchors.js"
export * as Governance from "./Governance.js"
export * as TagOperations from "./TagOperations.js"
export * as TopicOperations from "./TopicOperations.js"
export * as SharePage from "./SharePage.js"
export * as Topics from "./Topics.js"
export * as TopicsBundle from "./TopicsBundle.js"
export * as TopicsMigrations from "./TopicsMigrations.js"
export * as TopicsRefusal from "./TopicsRefusal.js"
