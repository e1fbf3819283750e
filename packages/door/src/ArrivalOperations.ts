/**
 * Arrivals on every surface: `arrival_read` (HTTP `GET /workspaces/<slug>/door/arrivals`, MCP
 * `service_arrival_read`, CLI `service arrivals list`), `arrival_show` (one Arrival with its trail; HTTP and
 * CLI) and `arrival_send_test` (a sample Arrival in a test workspace, no signature needed; HTTP `POST
 * .../door/sources/<id>/test-arrivals`, MCP `service_arrival_send_test`, CLI `service arrivals send-test`).
 *
 * A test Arrival takes the door's own path: the event is signed in-process with the Source's current secret and
 * handed to `Intake.receive`, so what it shows is what a real sender would get.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import { Caller } from "@service/core/RequestContext"
import { names as catalogNames } from "@service/events/Catalog"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { Arrivals, ArrivalView } from "./Arrivals.js"
import { codec, refuse } from "./DoorApiRefusal.js"
import { ArrivalStatus, Intake } from "./Intake.js"
import { doorAdminScopes, doorScopes } from "./SourceOperations.js"
import { Sources } from "./Sources.js"
import * as StandardWebhooks from "./StandardWebhooks.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const ArrivalId = Schema.String.pipe(Schema.pattern(/^arr_[0-9a-f]{24}$/)).annotations({
  description: "An Arrival id (arr_ followed by 24 hexadecimal digits)."
})
const SourceId = Schema.String.pipe(Schema.pattern(/^src_[0-9a-f]{24}$/)).annotations({
  description: "A Source id (src_ followed by 24 hexadecimal digits)."
})

const notFound = (id: string) =>
  refuse("arrival_not_found", `No Arrival ${id} in this workspace.`, "List the workspace's Arrivals and use one of their ids.", {
    field: "arrival_id"
  })

const ReadInput = Schema.Struct({
  arrival_id: Schema.optional(ArrivalId).annotations({ description: "Only this Arrival." }),
  source_id: Schema.optional(SourceId).annotations({ description: "Only Arrivals of this Source." }),
  status: Schema.optional(ArrivalStatus).annotations({
    description: "Only Arrivals with this status: received (waiting for a worker), accepted, pending_decision, set_aside, no_person, unmapped, failed or rejected."
  }),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))).annotations({
    description: "Arrivals per page, 1 to 100 (default 20)."
  }),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(200))).annotations({
    description: "next_cursor of the previous page, for older Arrivals."
  })
}).annotations({ ...strict, identifier: "ArrivalReadInput" })

// Models and the CLI send a number; the HTTP route reads text from the query string.
const ReadModelInput = Schema.Struct({
  ...ReadInput.fields,
  limit: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 100))).annotations({
    description: "Arrivals per page, 1 to 100 (default 20)."
  })
}).annotations({ ...strict, identifier: "ArrivalReadModelInput" })

const ArrivalPage = Schema.Struct({
  arrivals: Schema.Array(ArrivalView),
  next_cursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as cursor for older Arrivals; null on the last page." })
}).annotations({ identifier: "ArrivalPage" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: doorScopes, annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const arrivalRead = kit.make({
  name: "arrival_read",
  title: "Read Arrivals",
  description:
    "The workspace's Arrivals (every request the door stored), newest first, each with its status, why it has it, the contact and opportunity it produced, and its trail of recorded steps. Filter by Source, status or one Arrival id; page with cursor. Free.",
  refuses: ["arrival_not_found"],
  paginates: true,
  http: { method: "GET", path: "/arrivals", input: { kind: "query" } },
  cli: { words: ["list"], follow: { items: "arrivals", keys: ["id", "status"] } },
  input: ReadInput,
  modelInput: ReadModelInput,
  output: ArrivalPage,
  capability: {
    question: "What reached the door, and what became of each request?",
    requires: "Nothing; optionally source_id, status, arrival_id, limit and cursor.",
    example: { status: "accepted", limit: 5 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const arrivals = yield* Arrivals
      if (input.arrival_id !== undefined) {
        const found = yield* arrivals.get(caller.workspace.id, input.arrival_id)
        if (Option.isNone(found)) return yield* notFound(input.arrival_id)
        return { arrivals: [found.value], next_cursor: null }
      }
      const page = yield* arrivals.list({
        workspaceId: caller.workspace.id,
        sourceId: input.source_id,
        status: input.status,
        limit: input.limit ?? 20,
        cursor: input.cursor
      }).pipe(
        Effect.catchTag("BadCursor", (bad) =>
          refuse("invalid_field_value", bad.detail, "Send the next_cursor of a previous page unchanged, or leave cursor out.", {
            field: "cursor"
          }))
      )
      return { arrivals: page.arrivals, next_cursor: page.nextCursor }
    })
})

const ShowInput = Schema.Struct({ arrival_id: ArrivalId }).annotations({ ...strict, identifier: "ArrivalShowInput" })

/** @since 0.1.0 @category operations */
export const arrivalShow = kit.make({
  name: "arrival_show",
  title: "Show an Arrival",
  description: "One Arrival with its status, outcome and trail.",
  refuses: ["arrival_not_found"],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/arrivals/:arrival_id", input: { kind: "path", params: { arrival_id: "arrival_id" } } },
  cli: { words: ["show"], positional: "arrival_id" },
  input: ShowInput,
  output: ArrivalView,
  capability: {
    question: "What happened to this request?",
    requires: "arrival_id.",
    example: { arrival_id: "<arrival_id>" },
    exampleFrom: { operation: "arrival_read", path: ["arrivals", 0, "id"], field: "arrival_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const arrivals = yield* Arrivals
      const found = yield* arrivals.get(caller.workspace.id, input.arrival_id)
      if (Option.isNone(found)) return yield* notFound(input.arrival_id)
      return found.value
    })
})

const TestData = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  email: Schema.optional(Schema.String.pipe(Schema.maxLength(320))),
  phone: Schema.optional(Schema.String.pipe(Schema.maxLength(40))),
  role: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  company: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  website: Schema.optional(Schema.String.pipe(Schema.maxLength(300)))
}).annotations({ ...strict, identifier: "TestContactData" })

const SendTestInput = Schema.Struct({
  source_id: SourceId,
  type: Schema.Literal(...catalogNames).annotations({
    description: "A catalog event type, for example contact.created. Only contact.created and contact.updated are applied to the CRM."
  }),
  data: Schema.optional(TestData).annotations({
    description: "The event's data. Left out, a sample person with a new address each time."
  })
}).annotations({ ...strict, identifier: "SendTestArrivalInput" })

const SentTest = Schema.Struct({
  arrival: Schema.String,
  status: ArrivalStatus.annotations({ description: "received: a worker applies it next; read it with arrival_read." }),
  duplicate: Schema.Boolean
}).annotations({ identifier: "SentTestArrival" })

/** @since 0.1.0 @category operations */
export const arrivalSendTest = kit.make({
  name: "arrival_send_test",
  title: "Send a test Arrival",
  description:
    "Only in a test workspace: sends a sample CloudEvent of the given type through one of its Sources without a signature from you, and answers the Arrival it became. Nothing is charged, sent or delivered from a test workspace.",
  refuses: ["source_not_found", "source_archived", "not_a_test_workspace"],
  annotations: Operation.write,
  scopes: doorAdminScopes,
  http: { method: "POST", path: "/sources/:source_id/test-arrivals", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["send-test"], positional: "source_id" },
  input: SendTestInput,
  output: SentTest,
  capability: {
    question: "How do I see the door work end to end without signing anything?",
    requires: "A test workspace, one of its Sources, and an event type.",
    example: { source_id: "<source_id>", type: "contact.created" },
    runsIn: "test_workspace",
    exampleFrom: { operation: "arrival_read", path: ["arrivals", 0, "source_id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      if (!caller.workspace.isTest) {
        return yield* refuse(
          "not_a_test_workspace",
          "Test Arrivals are only taken in a test workspace.",
          "Create a test workspace (POST /workspaces/<slug>/sandboxes) and use its credential and Sources."
        )
      }
      const sources = yield* Sources
      const found = yield* sources.get(caller.workspace.id, input.source_id)
      if (Option.isNone(found)) {
        return yield* refuse("source_not_found", `No Source ${input.source_id} in this workspace.`, "List the workspace's Sources.", {
          field: "source_id"
        })
      }
      if (found.value.status !== "active") {
        return yield* refuse("source_archived", `Source ${input.source_id} is ${found.value.status}.`, "Use an active Source.", {
          field: "source_id"
        })
      }
      const intakeView = yield* sources.forIntake(input.source_id)
      const secret = Option.flatMap(intakeView, (view) => Option.fromNullable(view.secrets[0]))
      if (Option.isNone(secret)) {
        return yield* refuse("invalid_field_value", `Source ${input.source_id} has no whsec_ secret to sign a test with.`, "Use a cloudevents Source.", {
          field: "source_id"
        })
      }
      const tag = randomBytes(6).toString("hex")
      const data = input.data ?? { name: "Ana Prueba", email: `ana.prueba.${tag}@prueba.mx`, company: "Prueba" }
      const body = new TextEncoder().encode(JSON.stringify({
        specversion: "1.0",
        id: `test-${tag}`,
        source: "urn:service:test-arrivals",
        type: input.type,
        time: new Date(yield* Clock.currentTimeMillis).toISOString(),
        datacontenttype: "application/json",
        data
      }))
      const id = `msg_test_${tag}`
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const signature = StandardWebhooks.sign({ secret: secret.value, id, timestamp, body })
      const intake = yield* Intake
      const receipt = yield* intake.receive(input.source_id, {
        headers: {
          "content-type": "application/cloudevents+json",
          "webhook-id": id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature
        },
        body
      }).pipe(
        // The event is built here; a refusal means the sample itself is wrong for this Source.
        Effect.catchTag("DoorRefusal", (refusal) =>
          refuse("invalid_field_value", `The door refused the test event: ${refusal.detail}`, "Check the type and data fields.", {
            field: "data"
          }))
      )
      switch (receipt._tag) {
        case "Accepted":
          return { arrival: receipt.arrivalId, status: receipt.status, duplicate: false }
        case "Duplicate":
          return { arrival: receipt.arrivalId, status: receipt.status, duplicate: true }
        case "Ignored":
        case "Batch":
          // A CloudEvent is one event of a catalog type: neither is a possible answer to it.
          return yield* Effect.dieMessage(`a test CloudEvent was answered ${receipt._tag}`)
      }
    })
})

/** @since 0.1.0 @category operations */
export const operations = [arrivalRead, arrivalShow, arrivalSendTest] as const

/** What running the Arrival operations needs. @since 0.1.0 @category models */
export type Requirements = Arrivals | Sources | Intake | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "arrivals",
  title: "Arrivals",
  description: "What reached the door and what became of it; sample Arrivals in test workspaces.",
  operations,
  http: { prefix: "/workspaces/:workspace/door", workspaceScoped: true },
  mcp: { namespace: "arrival" },
  cli: { word: "arrivals", description: "The door's Arrivals: list, show, send a test." }
})
