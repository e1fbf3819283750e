/**
 * Branded identifiers shared by every package.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category ids */
export const WorkspaceId = Schema.String.pipe(Schema.brand("WorkspaceId"))
/** @since 0.1.0 @category ids */
export type WorkspaceId = typeof WorkspaceId.Type

/** @since 0.1.0 @category ids */
export const PersonId = Schema.String.pipe(Schema.brand("PersonId"))
/** @since 0.1.0 @category ids */
export type PersonId = typeof PersonId.Type

/** @since 0.1.0 @category ids */
export const CredentialId = Schema.String.pipe(Schema.brand("CredentialId"))
/** @since 0.1.0 @category ids */
export type CredentialId = typeof CredentialId.Type

/**
 * Workspace slugs appear in every URL: lower-case letters, digits and single hyphens, 2 to 48 characters.
 *
 * @since 0.1.0 @category ids
 */
export const WorkspaceSlug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,47}$/, {
    message: () => "a workspace slug is 2-48 lower-case letters, digits or single hyphens"
  }),
  Schema.brand("WorkspaceSlug")
)
/** @since 0.1.0 @category ids */
export type WorkspaceSlug = typeof WorkspaceSlug.Type
