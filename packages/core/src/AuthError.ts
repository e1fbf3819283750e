/**
 * Authentication and authorization refusals shared by every transport.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Scope } from "./Principal.js"

/**
 * No credential, an unknown one, or a revoked one. Deliberately carries no reason: callers learn nothing
 * about which keys exist.
 *
 * @since 0.1.0 @category errors
 */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>("@service/core/Unauthenticated")(
  "Unauthenticated",
  {}
) {
  override get message(): string {
    return "Authentication required: send a valid API key in x-api-key or a bearer token in Authorization."
  }
}

/**
 * The principal is known but lacks a scope or a role for this action.
 *
 * @since 0.1.0 @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("@service/core/Forbidden")("Forbidden", {
  reason: Schema.Literal("missing_scope", "person_required", "role_required"),
  detail: Schema.String,
  /** With `missing_scope`: the scopes any one of which would authorize the call. */
  scopes: Schema.optionalWith(Schema.Array(Scope), { default: () => [] })
}) {
  override get message(): string {
    return this.detail
  }
}
