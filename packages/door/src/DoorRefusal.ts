/**
 * Why the door refused a request: the codes of the spec's intake error table. A 401 never says whether the
 * Source exists: an unknown Source and a bad signature are the same `invalid_signature`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const DoorCode = Schema.Literal(
  "webhook_headers",
  "invalid_event",
  "invalid_signature",
  "stale_timestamp",
  "source_archived",
  "payload_too_large",
  "rate_limited",
  "source_paused"
)
/** @since 0.1.0 @category models */
export type DoorCode = typeof DoorCode.Type

/** The HTTP status of each code (spec: event intake, Errors). @since 0.1.0 @category models */
export const statusOf: { readonly [K in DoorCode]: 400 | 401 | 410 | 413 | 429 | 503 } = {
  webhook_headers: 400,
  invalid_event: 400,
  invalid_signature: 401,
  stale_timestamp: 401,
  source_archived: 410,
  payload_too_large: 413,
  rate_limited: 429,
  source_paused: 503
}

/**
 * A refused intake request. `detail` says what was wrong for the sender's logs; it never carries a secret and,
 * for the 401 codes, never anything that tells whether the Source exists.
 *
 * @since 0.1.0 @category errors
 */
export class DoorRefusal extends Schema.TaggedError<DoorRefusal>()("DoorRefusal", {
  code: DoorCode,
  detail: Schema.String
}) {}

/** @since 0.1.0 @category constructors */
export const refuse = (code: DoorCode, detail: string): DoorRefusal => new DoorRefusal({ code, detail })
