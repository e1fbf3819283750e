/**
 * What the topics and tags operations share: scopes, the caller as an Actor, and the mapping of domain
 * failures to the codec's refusals.
 */
import type { Scope } from "@service/core/Principal"
import { Caller, RequestContext } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Governance from "../Governance.js"
import type { Actor } from "../Topics.js"
import { refuse } from "../TopicsRefusal.js"

/** Reads: a topics writer, or a connector holding the older context scope. */
export const readScopes: ReadonlyArray<Scope> = ["topics:write", "context:read"]
/** Writes of any kind. */
export const writeScopes: ReadonlyArray<Scope> = ["topics:write"]

export const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const TopicId = Schema.String.pipe(Schema.pattern(/^tpc_[0-9a-f]{24}$/)).annotations({
  description: "A topic id (tpc_ followed by 24 hexadecimal digits).",
  examples: ["tpc_0123456789abcdef01234567"]
})

/** The caller's workspace id and the Actor the service records. */
export const caller = Effect.gen(function*() {
  const principal = yield* Caller
  const context = yield* RequestContext
  const actor: Actor = {
    personId: Option.getOrNull(Option.map(principal.person, (person) => person.id)),
    authority: Option.isSome(principal.person) && (principal.role === "owner" || principal.role === "admin"),
    via: Governance.viaOf(context.entrypoint)
  }
  return { workspaceId: principal.workspace.id, actor }
})

export const topicNotFound = (id: string) =>
  refuse("topic_not_found", `No topic ${id} in this workspace.`, "List or search the workspace's topics and use one of their ids.", {
    field: "topic"
  })

export const transitionRefused = (refused: Governance.TransitionRefused) => {
  if (refused.reason === "illegal") {
    return refuse(
      "invalid_transition",
      `The topic is ${refused.from}; ${refused.trigger} only applies to a topic that is ${refused.accepted.join(", ")}.`,
      "Read the topic's status and use the move its state allows.",
      { allowedValues: refused.accepted }
    )
  }
  return refused.trigger === "edit"
    ? refuse(
      "reviewed_needs_suggested_edit",
      "The topic is reviewed knowledge: only an owner or admin changes it directly.",
      "Open a suggested edit with the change; an owner or admin merges it."
    )
    : refuse(
      "reviewed_needs_owner",
      `The topic is reviewed knowledge: only an owner or admin may ${refused.trigger} it.`,
      "Ask an owner or admin of the workspace."
    )
}

/** A page size read from the query string (text) or given as a number (models, CLI). */
export const limitText = (max: number) => Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, max))
export const limitNumber = (max: number) => Schema.Number.pipe(Schema.int(), Schema.between(1, max))
export const offsetText = Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 100_000))
export const offsetNumber = Schema.Number.pipe(Schema.int(), Schema.between(0, 100_000))

/** Tags from the query string: comma-separated, the parameter possibly repeated. */
export const CommaTags = Schema.transform(Schema.Union(Schema.String, Schema.Array(Schema.String)), Governance.TagList, {
  strict: true,
  decode: (value) =>
    (typeof value === "string" ? [value] : value).flatMap((part) => part.split(",")).map((tag) => tag.trim()).filter((tag) =>
      tag.length > 0
    ),
  encode: (tags) => tags.join(",")
}).annotations({ description: "Tags, comma-separated: topics carrying any of them." })

export const ModelTags = Governance.TagList.annotations({ description: "Tags: topics carrying any of them." })
