/**
 * @since 0.1.0
 */
export * as IdentityAuthenticator from "./IdentityAuthenticator.js"
export * as IdentityBundle from "./IdentityBundle.js"
export * as IdentityCommands from "./IdentityCommands.js"
export * as IdentityDemo from "./IdentityDemo.js"
export * as IdentityMigrations from "./IdentityMigrations.js"
export * as IdentityRefusal from "./IdentityRefusal.js"
export * as InvitationOperations from "./InvitationOperations.js"
export * as Invitations from "./Invitations.js"
export * as KeyOperations from "./KeyOperations.js"
export * as MemberOperations from "./MemberOperations.js"
export * as Members from "./Members.js"
export * as Passwords from "./Passwords.js"
export * as People from "./People.js"
export * as PublicAddress from "./PublicAddress.js"
export * as Sessions from "./Sessions.js"
export * as SignInPages from "./SignInPages.js"
