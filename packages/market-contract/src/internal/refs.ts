import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Crypto } from "@service/core/Crypto"
import { type MarketDataRefusal, refuse } from "../MarketError.js"

/** Bumped when the cursor or ref payload shape changes: older tokens then fail as invalid. */
export const CONTRACT_VERSION = 1

const RecordRefPayload = Schema.Struct({
  v: Schema.Literal(CONTRACT_VERSION),
  k: Schema.Literal("supplier"),
  i: Schema.String,
  s: Schema.String,
  f: Schema.String
})
export type RecordRefPayload = typeof RecordRefPayload.Type

const FINGERPRINT = /^[0-9a-f]{32}$/

export const sealRecordRef = (payload: Omit<RecordRefPayload, "v">) =>
  Effect.flatMap(Crypto, (crypto) => crypto.sealJson("record_ref", { v: CONTRACT_VERSION, ...payload }))

export const openRecordRef = (ref: string): Effect.Effect<RecordRefPayload, MarketDataRefusal, Crypto> =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    if (FINGERPRINT.test(ref.trim())) {
      return yield* refuse(
        "invalid_record_ref",
        "The value is a record_fingerprint, which only tells rows apart; it cannot be used to fetch a record.",
        "Pass the record_ref of a row from a recent search response instead."
      )
    }
    const opened = yield* crypto.openJson("record_ref", ref.trim()).pipe(
      Effect.flatMap(Schema.decodeUnknown(RecordRefPayload)),
      Effect.option
    )
    if (opened._tag === "None") {
      return yield* refuse(
        "invalid_record_ref",
        "This record_ref was not issued by the market-data layer, or it was altered.",
        "Copy record_ref verbatim from a search row of a recent response, or search again."
      )
    }
    return opened.value
  })

const CursorPayload = Schema.Struct({
  v: Schema.Literal(CONTRACT_VERSION),
  op: Schema.String,
  snap: Schema.String,
  fd: Schema.String,
  last: Schema.Struct({ id: Schema.String, name: Schema.optional(Schema.String), rank: Schema.optional(Schema.Number) })
})
export type CursorPayload = typeof CursorPayload.Type

export const sealCursor = (payload: Omit<CursorPayload, "v">) =>
  Effect.flatMap(Crypto, (crypto) => crypto.sealJson("cursor", { v: CONTRACT_VERSION, ...payload }))

/**
 * Opens a cursor and checks it against the current request: another operation or other filters give
 * `invalid_cursor`; another corpus snapshot gives `cursor_stale`.
 */
export const openCursor = (
  cursor: string,
  expected: { readonly op: string; readonly filterDigest: string; readonly snapshotId: string }
): Effect.Effect<CursorPayload, MarketDataRefusal, Crypto> =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const opened = yield* crypto.openJson("cursor", cursor).pipe(
      Effect.flatMap(Schema.decodeUnknown(CursorPayload)),
      Effect.option
    )
    if (opened._tag === "None") {
      return yield* refuse(
        "invalid_cursor",
        "The cursor was not issued by this layer, was altered, or comes from an older contract version.",
        "Repeat the request without a cursor to start from the first page."
      )
    }
    const payload = opened.value
    if (payload.op !== expected.op || payload.fd !== expected.filterDigest) {
      return yield* refuse(
        "invalid_cursor",
        "The cursor belongs to a request with different filters; a cursor only resumes the exact request that issued it.",
        "Repeat the request without a cursor, or send the same filters as the request that returned it.",
        { field: "cursor" }
      )
    }
    if (payload.snap !== expected.snapshotId) {
      return yield* refuse(
        "cursor_stale",
        "The corpus was republished since this cursor was issued, so its positions no longer apply.",
        "Repeat the request without a cursor to read the current corpus from the first page.",
        { field: "cursor" }
      )
    }
    return payload
  })
