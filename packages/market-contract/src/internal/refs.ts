import { Crypto } from "@service/core/Crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type MarketDataRefusal, refuse } from "../MarketError.js"

/** Bumped when the cursor or ref payload shape changes: older tokens then fail as invalid. */
export const CONTRACT_VERSION = 2

/** The record kinds a record_ref can name; each has its own byte, so a ref of one kind is refused by another's get. */
export type RefKind = "supplier" | "opportunity" | "award" | "risk_mark" | "permit"

const kindBytes: Readonly<Record<RefKind, number>> = { supplier: 1, opportunity: 2, award: 3, risk_mark: 4, permit: 5 }
const refKinds: ReadonlyArray<RefKind> = ["supplier", "opportunity", "award", "risk_mark", "permit"]
const kindOfByte = new Map(refKinds.map((kind) => [kindBytes[kind], kind]))

/** What a record_ref seals: the kind, the row id at sealing time and the row's fingerprint (which survives reloads). */
export interface RecordRefPayload {
  readonly kind: RefKind
  /** The row id (bigint as decimal text). */
  readonly id: string
  /** 32 lowercase hex characters. */
  readonly fingerprint: string
}

const FINGERPRINT = /^[0-9a-f]{32}$/
const DECIMAL_ID = /^[0-9]{1,20}$/

// Binary layout, kept small because an agent reads a ref twice per row: version (1) | kind (1) |
// fingerprint (16) | id as ASCII decimal. Sealed, about 84 characters (a JSON payload took 180).
const encode = (payload: RecordRefPayload): Uint8Array => {
  const id = Buffer.from(payload.id, "latin1")
  return Buffer.concat([
    Buffer.from([CONTRACT_VERSION, kindBytes[payload.kind]]),
    Buffer.from(payload.fingerprint, "hex"),
    id
  ])
}

const decode = (bytes: Uint8Array): Option.Option<RecordRefPayload> => {
  const buffer = Buffer.from(bytes)
  if (buffer.length < 19 || buffer[0] !== CONTRACT_VERSION) return Option.none()
  const kind = kindOfByte.get(buffer[1] ?? 0)
  const id = buffer.subarray(18).toString("latin1")
  if (kind === undefined || !DECIMAL_ID.test(id)) return Option.none()
  return Option.some({ kind, id, fingerprint: buffer.subarray(2, 18).toString("hex") })
}

export const sealRecordRef = (payload: RecordRefPayload): Effect.Effect<string, never, Crypto> => {
  if (!FINGERPRINT.test(payload.fingerprint) || !DECIMAL_ID.test(payload.id)) {
    return Effect.dieMessage(`sealRecordRef: not a fingerprint and row id: ${payload.fingerprint} ${payload.id}`)
  }
  return Effect.flatMap(Crypto, (crypto) => crypto.seal("record_ref", encode(payload)))
}

/**
 * Opens a record_ref of the expected kind. A fingerprint, a value this layer did not seal, an altered one and a
 * ref of another record kind are all refused with `invalid_record_ref`.
 */
export const openRecordRef = (
  ref: string,
  expected: RefKind
): Effect.Effect<RecordRefPayload, MarketDataRefusal, Crypto> =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const trimmed = ref.trim()
    if (FINGERPRINT.test(trimmed)) {
      return yield* refuse(
        "invalid_record_ref",
        "The value is a record_fingerprint, which only tells rows apart; it cannot be used to fetch a record.",
        "Pass the record_ref of a row from a recent search response instead."
      )
    }
    const opened = yield* crypto.open("record_ref", trimmed).pipe(Effect.map(decode), Effect.orElseSucceed(() => Option.none()))
    if (Option.isNone(opened)) {
      return yield* refuse(
        "invalid_record_ref",
        "This record_ref was not issued by the market-data layer, was altered, or comes from an older contract version.",
        "Copy record_ref verbatim from a search row of a recent response, or search again."
      )
    }
    if (opened.value.kind !== expected) {
      return yield* refuse(
        "invalid_record_ref",
        `This record_ref names a ${opened.value.kind.replace("_", " ")} row, not a ${expected.replace("_", " ")} row.`,
        `Use a record_ref from a ${expected.replace("_", " ")} search row with this operation.`
      )
    }
    return opened.value
  })
