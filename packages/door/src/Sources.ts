/**
 * Sources: the entry points of the door. A CloudEvents Source verifies Standard Webhooks signatures with its
 * `whsec_` secret, shown once at creation or rotation and stored sealed (the door must compute HMACs with it);
 * after a rotation the previous secret keeps working for 24 hours. A Source is active, paused (requests are
 * refused with 503 until it is resumed) or archived (410, for good).
 *
 * A `webhook` Source takes a tool's own notices. With a template it verifies by the template's scheme: the
 * tool generates the signing secret (HMAC, static token, Clerk's `whsec_`) and the person pastes it in
 * (`signingSecret`, stored sealed); Jotform and PostHog, which do not sign, use the secret address, whose token
 * is shown once and kept only as a keyed fingerprint. A generic webhook Source chooses Standard Webhooks (a
 * `whsec_` secret of ours, like a CloudEvents Source) or the secret address (`verification`). A template
 * Source starts with its template's mapping confirmed as version 1; a generic one starts with none, and its
 * first notice becomes the example from which a mapping is proposed (see `Mappings`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto, isWebhookSecret } from "@service/core/Crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as Mappings from "./Mappings.js"
import * as Templates from "./Templates.js"

/** @since 0.1.0 @category models */
export const SourceStatus = Schema.Literal("active", "paused", "archived")
/** @since 0.1.0 @category models */
export type SourceStatus = typeof SourceStatus.Type

/** @since 0.1.0 @category models */
export const Source = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  type: Schema.Literal("cloudevents", "webhook"),
  template: Schema.NullOr(Schema.String),
  status: SourceStatus,
  pipeline_id: Schema.NullOr(Schema.String),
  stage_id: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Source = typeof Source.Type

/** @since 0.1.0 @category errors */
export class SourceNotFound extends Data.TaggedError("SourceNotFound")<{ readonly id: string }> {}

/** A Source's input that cannot be used: the field and why. @since 0.1.0 @category errors */
export class SourceInputInvalid extends Data.TaggedError("SourceInputInvalid")<{ readonly field: string; readonly why: string }> {}

/** A mapping that cannot be confirmed, with every problem found. @since 0.1.0 @category errors */
export class MappingInvalid extends Data.TaggedError("MappingInvalid")<{ readonly problems: ReadonlyArray<string> }> {}

/**
 * A new Source. `type` defaults to `cloudevents`. A `webhook` Source may name a `template`; one that signs with
 * the tool's own key (HMAC, static token, Clerk) needs the `signingSecret` the tool generated. A generic
 * `webhook` Source chooses its `verification`: Standard Webhooks (the default) or the secret address.
 *
 * @since 0.1.0 @category models
 */
export const CreateSourceInput = Schema.Struct({
  name: Schema.String,
  type: Schema.optional(Schema.Literal("cloudevents", "webhook")),
  template: Schema.optional(Templates.TemplateName),
  verification: Schema.optional(Schema.Literal("standard-webhooks", "secret-address")),
  signingSecret: Schema.optional(Schema.Redacted(Schema.String)),
  pipelineId: Schema.optional(Schema.String),
  stageId: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category models */
export type CreateSourceInput = typeof CreateSourceInput.Type

/** A CloudEvents Source's input (the form that always yields a secret). @since 0.1.0 @category models */
export interface CloudEventsSourceInput {
  readonly name: string
  readonly type?: "cloudevents" | undefined
  readonly pipelineId?: string | undefined
  readonly stageId?: string | undefined
}

/**
 * A created Source and what is shown this once: a `whsec_` secret for CloudEvents and Standard Webhooks Sources,
 * a token for secret-address Sources (`POST /door/<id>/<token>`), neither for a template that signs with the
 * tool's key.
 *
 * @since 0.1.0 @category models
 */
export interface Created {
  readonly source: Source
  readonly secret?: Redacted.Redacted<string> | undefined
  readonly token?: Redacted.Redacted<string> | undefined
}

/** What a rotation shows once: a new secret (the old one verifies 24 more hours) or a new token (the old one is dead). @since 0.1.0 @category models */
export type Rotated = { readonly secret: Redacted.Redacted<string> } | { readonly token: Redacted.Redacted<string> }

/**
 * A Source with its verification, confirmed mapping, example notice (secrets redacted; deleted 30 days after it
 * arrived), mapping proposal and the leaf paths of notices that no mapping reads yet.
 *
 * @since 0.1.0 @category models
 */
export const SourceDetail = Schema.Struct({
  source: Source,
  verification: Templates.VerificationKind,
  mapping: Schema.NullOr(Mappings.SourceMapping),
  example: Schema.NullOr(Schema.Unknown),
  example_received_at: Schema.NullOr(Schema.String),
  proposal: Schema.NullOr(Mappings.MappingInput),
  undecided_fields: Schema.Array(Schema.String)
})
/** @since 0.1.0 @category models */
export type SourceDetail = typeof SourceDetail.Type

/**
 * What the intake needs of a Source, by id alone: its verification, the secrets that verify now (unsealed),
 * the tool's signing secret (unsealed), the fingerprint of its address token and its mapping.
 *
 * @since 0.1.0 @category models
 */
export interface IntakeView {
  readonly source: Source
  readonly secrets: ReadonlyArray<string>
  readonly verification: Templates.VerificationKind
  readonly signingSecret: string | null
  readonly tokenFingerprint: string | null
  readonly mapping: Mappings.SourceMapping | null
}

/** Keyed fingerprints of address tokens are taken in this domain. @since 0.1.0 @category constants */
export const TOKEN_FINGERPRINT_DOMAIN = "door.source-token"

/** At most this many undecided leaf paths are kept per Source. @since 0.1.0 @category constants */
export const MAX_UNDECIDED_FIELDS = 200

/** How long a rotated-out secret still verifies (spec: 24 hours). @since 0.1.0 @category constants */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

const SEAL_PURPOSE = "door.source-secret"
const SIGNING_SEAL_PURPOSE = "door.source-signing-secret"

/** @since 0.1.0 @category tags */
export class Sources extends Context.Tag("@service/door/Sources")<Sources, {
  /** A new Source and its secret or token, shown this once (a CloudEvents Source always has a secret). */
  readonly create: {
    (workspaceId: string, input: CloudEventsSourceInput): Effect.Effect<{ readonly source: Source; readonly secret: Redacted.Redacted<string> }>
    (workspaceId: string, input: CreateSourceInput): Effect.Effect<Created, SourceInputInvalid>
  }
  /** The Source with its mapping, example, proposal and undecided fields. */
  readonly detail: (workspaceId: string, id: string) => Effect.Effect<Option.Option<SourceDetail>>
  /** Confirms a webhook Source's mapping as its next version. */
  readonly confirmMapping: (
    workspaceId: string,
    id: string,
    mapping: Mappings.MappingInput
  ) => Effect.Effect<SourceDetail, SourceNotFound | SourceInputInvalid | MappingInvalid>
  /**
   * A new `whsec_` secret (the previous one verifies 24 more hours) or a new address token (the old one stops at
   * once); a Source verified with the tool's own key has nothing of ours to rotate (`SourceInputInvalid`).
   */
  readonly rotate: (workspaceId: string, id: string) => Effect.Effect<Rotated, SourceNotFound | SourceInputInvalid>
  /**
   * Notes a webhook notice (secrets already redacted): the first becomes the example, with a proposal while the
   * Source has no mapping; leaf paths of its elements that the mapping (or proposal) does not read become
   * undecided fields.
   */
  readonly noteNotice: (id: string, notice: { readonly body: unknown; readonly elements: ReadonlyArray<unknown> }) => Effect.Effect<void>
  readonly get: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Source>>
  /** The workspace's Sources, newest first, optionally of one status. */
  readonly list: (workspaceId: string, status?: SourceStatus | undefined) => Effect.Effect<ReadonlyArray<Source>>
  /** Renames a Source or changes its Pipeline and stage (null clears them). An archived Source keeps what it had. */
  readonly update: (
    workspaceId: string,
    id: string,
    change: {
      readonly name?: string | undefined
      readonly route?: { readonly pipelineId: string; readonly stageId: string } | null | undefined
    }
  ) => Effect.Effect<Source, SourceNotFound>
  readonly setStatus: (workspaceId: string, id: string, status: SourceStatus) => Effect.Effect<Source, SourceNotFound>
  /** A new secret (shown once); the previous one verifies for 24 more hours. */
  readonly rotateSecret: (workspaceId: string, id: string) => Effect.Effect<Redacted.Redacted<string>, SourceNotFound>
  /** The Source behind a door address and what verifies for it now (unsealed), by id alone. */
  readonly forIntake: (id: string) => Effect.Effect<Option.Option<IntakeView>>
}>() {}

const SourceRow = Schema.Struct({
  ...Source.fields,
  secret_sealed: Schema.NullOr(Schema.String),
  previous_secret_sealed: Schema.NullOr(Schema.String),
  previous_valid_until: Schema.NullOr(Schema.DateFromSelf),
  verification: Templates.VerificationKind,
  signing_secret_sealed: Schema.NullOr(Schema.String),
  token_fingerprint: Schema.NullOr(Schema.String),
  mapping: Schema.Unknown,
  example: Schema.Unknown,
  example_at: Schema.NullOr(Schema.DateFromSelf),
  proposal: Schema.Unknown,
  undecided_fields: Schema.Unknown
})
const decodeRows = Schema.decodeUnknown(Schema.Array(SourceRow))
const columns = "id, workspace_id, name, type, template, status, pipeline_id, stage_id, secret_sealed, previous_secret_sealed, previous_valid_until, " +
  "verification, signing_secret_sealed, token_fingerprint, mapping, example, example_at, proposal, undecided_fields"
// What the door reads of a Source on every request: never its example, proposal or undecided fields.
const IntakeRow = Schema.Struct({
  ...Source.fields,
  secret_sealed: Schema.NullOr(Schema.String),
  previous_secret_sealed: Schema.NullOr(Schema.String),
  previous_valid_until: Schema.NullOr(Schema.DateFromSelf),
  verification: Templates.VerificationKind,
  signing_secret_sealed: Schema.NullOr(Schema.String),
  token_fingerprint: Schema.NullOr(Schema.String),
  mapping: Schema.Unknown
})
const decodeIntakeRows = Schema.decodeUnknown(Schema.Array(IntakeRow))
const intakeColumns = "id, workspace_id, name, type, template, status, pipeline_id, stage_id, secret_sealed, previous_secret_sealed, " +
  "previous_valid_until, verification, signing_secret_sealed, token_fingerprint, mapping"
const decodeMapping = Schema.decodeUnknown(Schema.NullOr(Mappings.SourceMapping))
const decodeProposal = Schema.decodeUnknown(Schema.NullOr(Mappings.MappingInput))
const decodeUndecided = Schema.decodeUnknown(Schema.Array(Schema.String))

const toSource = (row: Source): Source => ({
  id: row.id,
  workspace_id: row.workspace_id,
  name: row.name,
  type: row.type,
  template: row.template,
  status: row.status,
  pipeline_id: row.pipeline_id,
  stage_id: row.stage_id
})

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto

  const rowsWhere = (workspaceId: string | undefined, id: string) =>
    sql`SELECT ${sql.literal(columns)} FROM door.sources
        WHERE id = ${id} ${workspaceId === undefined ? sql`` : sql`AND workspace_id = ${workspaceId}`}`.pipe(
      Effect.flatMap(decodeRows),
      Effect.orDie
    )

  const insertSource = (
    workspaceId: string,
    input: CreateSourceInput,
    stored: {
      readonly type: Source["type"]
      readonly template: Templates.TemplateName | null
      readonly verification: Templates.VerificationKind
      readonly secretSealed: string | null
      readonly signingSecretSealed: string | null
      readonly tokenFingerprint: string | null
      readonly mapping: Mappings.SourceMapping | null
    }
  ) =>
    Effect.gen(function*() {
      const id = `src_${randomBytes(12).toString("hex")}`
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const mapping = stored.mapping === null ? null : JSON.stringify(stored.mapping)
      yield* sql`INSERT INTO door.sources (id, workspace_id, name, type, template, status, secret_sealed, pipeline_id, stage_id, created_at,
          verification, signing_secret_sealed, token_fingerprint, mapping, mapping_version)
        VALUES (${id}, ${workspaceId}, ${input.name}, ${stored.type}, ${stored.template}, 'active', ${stored.secretSealed},
                ${input.pipelineId ?? null}, ${input.stageId ?? null}, ${at}, ${stored.verification}, ${stored.signingSecretSealed},
                ${stored.tokenFingerprint}, ${mapping}::jsonb, ${stored.mapping?.version ?? 0})`.pipe(Effect.orDie)
      const source: Source = {
        id,
        workspace_id: workspaceId,
        name: input.name,
        type: stored.type,
        template: stored.template,
        status: "active",
        pipeline_id: input.pipelineId ?? null,
        stage_id: input.stageId ?? null
      }
      return source
    })

  const newSecret = Effect.gen(function*() {
    const secret = yield* crypto.webhookSecret()
    return { secret, sealed: yield* crypto.seal(SEAL_PURPOSE, Redacted.value(secret)) }
  })

  // What an unknown id is read as: a Source of the same shape with a sealed throwaway secret, so a miss costs
  // what a hit costs (decoding, unsealing) and the door's 401 does not tell by its time whether a Source exists.
  const decoyRow = {
    id: "src_000000000000000000000000",
    workspace_id: "ws_decoy",
    name: "decoy",
    type: "cloudevents",
    template: null,
    status: "active",
    pipeline_id: null,
    stage_id: null,
    secret_sealed: (yield* newSecret).sealed,
    previous_secret_sealed: null,
    previous_valid_until: null,
    verification: "standard-webhooks",
    signing_secret_sealed: null,
    token_fingerprint: null,
    mapping: null
  }


  // A token for the address path: URL-safe, 192 random bits; only its keyed fingerprint is stored.
  const newToken = Effect.gen(function*() {
    const token = `tok_${yield* crypto.randomToken(24)}`
    return { token: Redacted.make(token), fingerprint: yield* crypto.fingerprint(TOKEN_FINGERPRINT_DOMAIN, token) }
  })

  const invalid = (field: string, why: string) => Effect.fail(new SourceInputInvalid({ field, why }))

  const createAny = (workspaceId: string, input: CreateSourceInput): Effect.Effect<Created, SourceInputInvalid> =>
    Effect.gen(function*() {
      if (input.type !== "webhook") {
        if (input.template !== undefined) return yield* invalid("template", "only a webhook Source has a template")
        if (input.verification !== undefined) return yield* invalid("verification", "a CloudEvents Source verifies Standard Webhooks")
        if (input.signingSecret !== undefined) return yield* invalid("signingSecret", "a CloudEvents Source's secret is generated here")
        const { sealed, secret } = yield* newSecret
        const source = yield* insertSource(workspaceId, input, {
          type: "cloudevents",
          template: null,
          verification: "standard-webhooks",
          secretSealed: sealed,
          signingSecretSealed: null,
          tokenFingerprint: null,
          mapping: null
        })
        return { source, secret }
      }
      const template = input.template === undefined ? null : Templates.template(input.template)
      if (template !== null && input.verification !== undefined && input.verification !== template.verification) {
        return yield* invalid("verification", `${template.label} notices are verified by ${template.verification}`)
      }
      const verification: Templates.VerificationKind = template?.verification ?? input.verification ?? "standard-webhooks"
      // The tool signs with a key it generated: Standard Webhooks under a template (Clerk) is the tool's key too.
      const toolSigns = template !== null && verification !== "secret-address"
      const signing = input.signingSecret === undefined ? null : Redacted.value(input.signingSecret)
      if (toolSigns && (signing === null || signing.trim() === "")) {
        return yield* invalid("signingSecret", `${template?.label ?? "The tool"} signs its notices with a secret it generates: paste it here`)
      }
      if (!toolSigns && signing !== null) {
        return yield* invalid("signingSecret", "this Source's secret or token is generated here, not pasted in")
      }
      if (verification === "standard-webhooks" && signing !== null && !isWebhookSecret(signing)) {
        return yield* invalid("signingSecret", "a Standard Webhooks secret is whsec_ followed by base64 of 24 to 64 bytes")
      }
      const secret = verification === "standard-webhooks" && !toolSigns ? yield* newSecret : null
      const token = verification === "secret-address" ? yield* newToken : null
      const source = yield* insertSource(workspaceId, input, {
        type: "webhook",
        template: template?.name ?? null,
        verification,
        secretSealed: secret?.sealed ?? null,
        signingSecretSealed: signing === null ? null : yield* crypto.seal(SIGNING_SEAL_PURPOSE, signing),
        tokenFingerprint: token?.fingerprint ?? null,
        // A template Source starts with its template's mapping, confirmed: every sample yields person fields at once.
        mapping: template === null ? null : { version: 1, ...Mappings.fromTemplate(template) }
      })
      return { source, secret: secret?.secret, token: token?.token }
    })

  function create(
    workspaceId: string,
    input: CloudEventsSourceInput
  ): Effect.Effect<{ readonly source: Source; readonly secret: Redacted.Redacted<string> }>
  function create(workspaceId: string, input: CreateSourceInput): Effect.Effect<Created, SourceInputInvalid>
  function create(workspaceId: string, input: CreateSourceInput): Effect.Effect<Created, SourceInputInvalid> {
    return createAny(workspaceId, input)
  }

  const get = (workspaceId: string, id: string) =>
    Effect.map(rowsWhere(workspaceId, id), (rows) => Option.map(Option.fromNullable(rows[0]), toSource))

  const list = (workspaceId: string, status?: SourceStatus | undefined) =>
    sql`SELECT ${sql.literal(columns)} FROM door.sources
        WHERE workspace_id = ${workspaceId} ${status === undefined ? sql`` : sql`AND status = ${status}`}
        ORDER BY created_at DESC, id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows.map(toSource)),
      Effect.orDie
    )

  const update = (
    workspaceId: string,
    id: string,
    change: {
      readonly name?: string | undefined
      readonly route?: { readonly pipelineId: string; readonly stageId: string } | null | undefined
    }
  ) =>
    Effect.gen(function*() {
      const current = yield* get(workspaceId, id)
      if (Option.isNone(current)) return yield* new SourceNotFound({ id })
      if (current.value.status === "archived") return current.value
      const name = change.name ?? current.value.name
      const pipelineId = change.route === undefined ? current.value.pipeline_id : change.route?.pipelineId ?? null
      const stageId = change.route === undefined ? current.value.stage_id : change.route?.stageId ?? null
      yield* sql`UPDATE door.sources SET name = ${name}, pipeline_id = ${pipelineId}, stage_id = ${stageId}
        WHERE id = ${id}`.pipe(Effect.orDie)
      return { ...current.value, name, pipeline_id: pipelineId, stage_id: stageId }
    })

  const setStatus = (workspaceId: string, id: string, status: SourceStatus) =>
    Effect.gen(function*() {
      const current = yield* get(workspaceId, id)
      if (Option.isNone(current)) return yield* new SourceNotFound({ id })
      // Archived is for good.
      if (current.value.status === "archived") return current.value
      yield* sql`UPDATE door.sources SET status = ${status} WHERE id = ${id}`.pipe(Effect.orDie)
      return { ...current.value, status }
    })

  const rotateSecret = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const rows = yield* rowsWhere(workspaceId, id)
      const row = rows[0]
      if (row === undefined) return yield* new SourceNotFound({ id })
      const secret = yield* crypto.webhookSecret()
      const sealed = yield* crypto.seal(SEAL_PURPOSE, Redacted.value(secret))
      const until = new Date((yield* Clock.currentTimeMillis) + ROTATION_OVERLAP_MS).toISOString()
      yield* sql`UPDATE door.sources SET secret_sealed = ${sealed}, previous_secret_sealed = ${row.secret_sealed},
          previous_valid_until = ${until} WHERE id = ${id}`.pipe(Effect.orDie)
      return secret
    })

  const unseal = (sealed: string, purpose = SEAL_PURPOSE) =>
    crypto.open(purpose, sealed).pipe(Effect.map((bytes) => Buffer.from(bytes).toString("utf8")), Effect.orDie)

  const mappingOf = (row: { readonly mapping: unknown }) => decodeMapping(row.mapping).pipe(Effect.orDie)

  const forIntake = (id: string) =>
    Effect.gen(function*() {
      const found = yield* sql`SELECT ${sql.literal(intakeColumns)} FROM door.sources WHERE id = ${id}`.pipe(Effect.orDie)
      const [row] = yield* decodeIntakeRows(found.length === 0 ? [decoyRow] : found).pipe(Effect.orDie)
      if (row === undefined) return Option.none()
      const now = yield* Clock.currentTimeMillis
      const secrets: Array<string> = []
      if (row.secret_sealed !== null) secrets.push(yield* unseal(row.secret_sealed))
      if (row.previous_secret_sealed !== null && row.previous_valid_until !== null && row.previous_valid_until.getTime() > now) {
        secrets.push(yield* unseal(row.previous_secret_sealed))
      }
      const view: IntakeView = {
        source: toSource(row),
        secrets,
        verification: row.verification,
        signingSecret: row.signing_secret_sealed === null ? null : yield* unseal(row.signing_secret_sealed, SIGNING_SEAL_PURPOSE),
        tokenFingerprint: row.token_fingerprint,
        mapping: yield* mappingOf(row)
      }
      return found.length === 0 ? Option.none() : Option.some(view)
    })

  const detailOf = (row: typeof SourceRow.Type) =>
    Effect.gen(function*() {
      const detail: SourceDetail = {
        source: toSource(row),
        verification: row.verification,
        mapping: yield* mappingOf(row),
        example: row.example ?? null,
        example_received_at: row.example_at === null ? null : row.example_at.toISOString(),
        proposal: yield* decodeProposal(row.proposal).pipe(Effect.orDie),
        undecided_fields: yield* decodeUndecided(row.undecided_fields ?? []).pipe(Effect.orDie)
      }
      return detail
    })

  const detail = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const row = (yield* rowsWhere(workspaceId, id))[0]
      return row === undefined ? Option.none() : Option.some(yield* detailOf(row))
    })

  const confirmMapping = (workspaceId: string, id: string, mapping: Mappings.MappingInput) =>
    Effect.gen(function*() {
      const row = (yield* rowsWhere(workspaceId, id))[0]
      if (row === undefined) return yield* new SourceNotFound({ id })
      if (row.type !== "webhook") return yield* invalid("type", "only a webhook Source has a mapping")
      const problems = Mappings.problems(mapping)
      if (problems.length > 0) return yield* new MappingInvalid({ problems })
      const undecided = yield* decodeUndecided(row.undecided_fields ?? []).pipe(Effect.orDie)
      // Concurrent confirmations each get their own version: the increment happens in the statement.
      yield* sql`UPDATE door.sources SET mapping_version = mapping_version + 1,
          mapping = jsonb_set(${JSON.stringify({ version: 0, ...mapping })}::jsonb, '{version}', to_jsonb(mapping_version + 1)),
          undecided_fields = ${JSON.stringify(undecided.filter((path) => !Mappings.reads(mapping, path)))}::jsonb
        WHERE id = ${id}`.pipe(Effect.orDie)
      const updated = (yield* rowsWhere(workspaceId, id))[0]
      if (updated === undefined) return yield* new SourceNotFound({ id })
      return yield* detailOf(updated)
    })

  const rotate = (workspaceId: string, id: string): Effect.Effect<Rotated, SourceNotFound | SourceInputInvalid> =>
    Effect.gen(function*() {
      const row = (yield* rowsWhere(workspaceId, id))[0]
      if (row === undefined) return yield* new SourceNotFound({ id })
      if (row.verification === "secret-address") {
        const { fingerprint, token } = yield* newToken
        // The old token stops at once: its fingerprint is simply replaced.
        yield* sql`UPDATE door.sources SET token_fingerprint = ${fingerprint} WHERE id = ${id}`.pipe(Effect.orDie)
        return { token }
      }
      if (row.signing_secret_sealed !== null || row.secret_sealed === null) {
        return yield* invalid("signingSecret", "the tool generates this Source's signing secret; rotate it there")
      }
      return { secret: yield* rotateSecret(workspaceId, id) }
    })

  const noteNotice = (id: string, notice: { readonly body: unknown; readonly elements: ReadonlyArray<unknown> }) =>
    Effect.gen(function*() {
      const row = (yield* rowsWhere(undefined, id))[0]
      if (row === undefined) return
      const mapping = yield* mappingOf(row)
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const known = yield* decodeUndecided(row.undecided_fields ?? []).pipe(Effect.orDie)
      const proposal = mapping === null
        ? yield* decodeProposal(row.proposal).pipe(Effect.orDie, Effect.map((stored) => stored ?? Mappings.propose(notice.body)))
        : null
      const reader = mapping ?? proposal
      const fresh = notice.elements.flatMap((element) => Mappings.undecidedPaths(reader, element))
      const undecided = [...new Set([...known, ...fresh])].slice(0, MAX_UNDECIDED_FIELDS)
      const example = row.example === null ? JSON.stringify(notice.body) : null
      // Most notices of a settled Source change nothing: no write, so busy Sources do not queue on their row.
      if (example === null && undecided.length === known.length && (proposal === null || row.proposal !== null)) return
      yield* sql`UPDATE door.sources SET
          example = COALESCE(example, ${example}::jsonb),
          example_at = CASE WHEN example IS NULL AND ${example}::text IS NOT NULL THEN ${at}::timestamptz ELSE example_at END,
          proposal = COALESCE(${proposal === null ? null : JSON.stringify(proposal)}::jsonb, proposal),
          undecided_fields = ${JSON.stringify(undecided)}::jsonb
        WHERE id = ${id}`.pipe(Effect.orDie)
    })

  return Sources.of({ create, get, list, update, setStatus, rotateSecret, forIntake, detail, confirmMapping, rotate, noteNotice })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Sources, never, SqlClient.SqlClient | Crypto> = Layer.effect(Sources, make)
