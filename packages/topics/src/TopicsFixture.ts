/**
 * The topics bundle's conformance fixture: a topic for the relation examples to point at (`to_topic`), and the
 * linked repository (`acme/api`, default branch `main`) the file-index example loads an index for.
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import * as Effect from "effect/Effect"
import { Anchors } from "./Anchors.js"
import { Topics } from "./Topics.js"

/** @since 0.1.0 @category fixtures */
export const fixture: Bundle.Fixture<Topics | Anchors> = {
  seed: ({ owner, workspace }) =>
    Effect.gen(function*() {
      if (workspace.isTest) return {}
      const topic = yield* (yield* Topics).create(workspace.id, { personId: owner.id, authority: true, via: "human" }, {
        title: "Conformance fixture topic",
        body: "The topic the capability examples relate to."
      })
      yield* (yield* Anchors).link(workspace.id, { name: "acme/api", default_branch: "main" })
      return { topics_relation_add: { to_topic: topic.id } }
    })
}
