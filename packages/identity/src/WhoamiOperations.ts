/**
 * `whoami` (HTTP `GET /workspaces/<slug>/whoami`, CLI `service whoami`): who the credential of the call is: the
 * person behind it (none for a faceless key), the workspace, the role there, the scopes it holds and its kind (API
 * key, OAuth token or session). Free, with any scope; not an MCP tool.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import { Role, Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { codec } from "./IdentityRefusal.js"

const kit = Operation.kit({ refusals: codec, scopes: Scope.literals, annotations: Operation.readOnly })

/** @since 0.1.0 @category models */
export const Whoami = Schema.Struct({
  person: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })).annotations({
    description: "The person the credential acts as; null for a faceless key."
  }),
  workspace: Schema.Struct({ slug: Schema.String, name: Schema.String, test: Schema.Boolean }),
  role: Role,
  scopes: Schema.Array(Scope),
  credential: Schema.Struct({
    id: Schema.String,
    kind: Schema.Literal("api_key", "bearer", "session").annotations({ description: "api_key, bearer (an OAuth access token) or session." })
  })
}).annotations({ identifier: "Whoami" })

/** @since 0.1.0 @category operations */
export const whoami = kit.make({
  name: "whoami",
  title: "Who am I",
  description:
    "Who the credential of this call is: the person behind it (null for a faceless key), the workspace and the role there, the scopes it holds, and whether it is an API key, an OAuth token or a session. Free.",
  refuses: [],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/whoami", input: { kind: "query" } },
  cli: {
    words: [],
    summary: Operation.summaryOf(Whoami, (me) =>
      [
        `${me.person === null ? "a faceless key" : me.person.name} in ${me.workspace.slug} (${me.workspace.name}) as ${me.role}`,
        `credential ${me.credential.kind} ${me.credential.id}`,
        `scopes: ${me.scopes.join(", ")}`
      ].join("\n"))
  },
  input: Schema.Struct({}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "WhoamiInput" }),
  output: Whoami,
  capability: { question: "Which person, workspace, role and scopes does this credential stand for?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.map(Caller, (caller) => ({
      person: Option.match(caller.person, { onNone: () => null, onSome: (person) => ({ id: person.id, name: person.displayName }) }),
      workspace: { slug: caller.workspace.slug, name: caller.workspace.name, test: caller.workspace.isTest },
      role: caller.role,
      scopes: caller.scopes,
      credential: { id: caller.credential.id, kind: caller.credential.kind }
    }))
})

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Caller>()({
  name: "whoami",
  title: "Who am I",
  description: "What the credential of a call stands for.",
  operations: [whoami],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "whoami" },
  cli: { word: "whoami", description: "Who this credential is: person, workspace, role and scopes." }
})
