/**
 * The `identity` schema's migrations: passwords, sign-in failures, sessions, invitations, and the OAuth server's store. People, workspaces,
 * memberships and keys stay in `core`, which every domain reads through the Authenticator.
 *
 * @since 0.1.0
 */
import identity from "./migrations/0001_identity.js"
import oauth from "./migrations/0002_oauth.js"
import credentialNotify from "./migrations/0003_credential_notify.js"
import signInAddresses from "./migrations/0004_sign_in_addresses.js"
import oauthLimits from "./migrations/0005_oauth_limits.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "identity",
  dependsOn: ["core"],
  migrations: {
    "0001_identity": identity,
    "0002_oauth": oauth,
    "0003_credential_notify": credentialNotify,
    "0004_sign_in_addresses": signInAddresses,
    "0005_oauth_limits": oauthLimits
  }
} as const
