/**
 * The door bundle's conformance fixture: in the suite's workspace, a Pipeline (open and won stages), a CloudEvents
 * Source routed to it that received one signed event (applied: an accepted Arrival, its contact and opportunity),
 * a webhook Source (mapping and reprocessing examples), a Source to archive, and a contact to erase; in its test
 * workspace, a Source for the test Arrival example. Each example that names a record gets that record's id.
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import { Crm } from "@service/crm/Crm"
import * as CrmFixture from "@service/crm/CrmFixture"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Intake } from "./Intake.js"
import { Sources } from "./Sources.js"
import * as StandardWebhooks from "./StandardWebhooks.js"

/** @since 0.1.0 @category fixtures */
export const fixture: Bundle.Fixture<Sources | Intake | Crm> = {
  seed: ({ workspace }) =>
    Effect.gen(function*() {
      const sources = yield* Sources
      if (workspace.isTest) {
        const { source } = yield* sources.create(workspace.id, { name: "Conformance test form" })
        return { arrival_send_test: { source_id: source.id } }
      }
      const crm = yield* Crm
      const intake = yield* Intake
      const pipeline = yield* crm.createPipeline(workspace.id, {
        name: "Conformance",
        stages: [{ name: "New", outcome: "open" }, { name: "Won", outcome: "won" }]
      }).pipe(Effect.orDie)
      const [opened, won] = pipeline.stages
      if (opened === undefined || won === undefined) return yield* Effect.dieMessage("the conformance Pipeline has no stages")
      const form = yield* sources.create(workspace.id, { name: "Conformance form", pipelineId: pipeline.id, stageId: opened.id })
      const body = new TextEncoder().encode(JSON.stringify({
        specversion: "1.0",
        id: "conformance-1",
        source: "https://forms.example.com/conformance",
        type: "contact.created",
        data: { name: "Conformance person", email: "conformance.person@example.com" }
      }))
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const receipt = yield* intake.receive(form.source.id, {
        headers: {
          "content-type": "application/cloudevents+json",
          "webhook-id": "msg_conformance_1",
          "webhook-timestamp": String(timestamp),
          "webhook-signature": StandardWebhooks.sign({ secret: Redacted.value(form.secret), id: "msg_conformance_1", timestamp, body })
        },
        body
      }).pipe(Effect.orDie)
      if (receipt._tag !== "Accepted") return yield* Effect.dieMessage(`the conformance event was not accepted: ${receipt._tag}`)
      yield* intake.drain("conformance-fixture")
      const arrival = yield* intake.arrival(workspace.id, receipt.arrivalId)
      const applied = Option.getOrUndefined(arrival)
      if (applied?.status !== "accepted" || applied.contact_id === null || applied.opportunity_id === null) {
        return yield* Effect.dieMessage(`the conformance Arrival was not applied: ${JSON.stringify(applied)}`)
      }
      const webhook = yield* sources.create(workspace.id, { name: "Conformance webhook", type: "webhook" }).pipe(Effect.orDie)
      const retired = yield* sources.create(workspace.id, { name: "Conformance Source to archive" })
      const erased = yield* crm.applyContact(workspace.id, { name: "Conformance erasure", email: "conformance.erasure@example.com" })
      if (erased._tag !== "Created") return yield* Effect.dieMessage(`the contact to erase was not created: ${erased._tag}`)
      return {
        ...(yield* CrmFixture.seed(workspace.id)),
        source_read: { source_id: form.source.id },
        source_update: { source_id: webhook.source.id },
        source_archive: { source_id: retired.source.id },
        source_rotate_secret: { source_id: form.source.id },
        mapping_confirm: { source_id: webhook.source.id },
        reprocess_unmapped: { source_id: webhook.source.id },
        contact_read: { contact_id: applied.contact_id },
        contact_erase: { contact_id: erased.contact.id },
        opportunity_move: { opportunity_id: applied.opportunity_id, stage_id: won.id }
      }
    })
}
