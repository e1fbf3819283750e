/**
 * The ports through which the service reaches outside: email (`Mailer`) and third-party providers
 * (`Providers`, e.g. a contact-data provider behind unlock). Domains call the port; a host provides the
 * adapter. Both are wrapped by {@link guardMailer} / {@link guardProviders} in every runtime, so a test
 * workspace never sends an email nor calls a provider: the call answers `Suppressed` and the adapter is not
 * reached (spec: in a test workspace "no email sent, no provider called").
 *
 * The default adapters send nothing and say so (`NotConfigured`): the service ships no mail or provider
 * account of its own.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Workspace } from "./Workspace.js"

/** @since 0.1.0 @category models */
export const EmailMessage = Schema.Struct({
  to: Schema.String.pipe(Schema.pattern(/^[^@\s]+@[^@\s]+$/)),
  subject: Schema.String.pipe(Schema.maxLength(300)),
  text: Schema.String
})
/** @since 0.1.0 @category models */
export type EmailMessage = typeof EmailMessage.Type

/** A request to a provider: which one, what to do, with what. @since 0.1.0 @category models */
export const ProviderRequest = Schema.Struct({
  provider: Schema.String,
  operation: Schema.String,
  payload: Schema.Unknown
})
/** @since 0.1.0 @category models */
export type ProviderRequest = typeof ProviderRequest.Type

/**
 * What became of an outbound call: done (with the adapter's reference or answer), or suppressed because the
 * workspace is a test workspace.
 *
 * @since 0.1.0 @category models
 */
export type Outcome<A> = Data.TaggedEnum<{
  Done: { readonly value: A }
  Suppressed: { readonly reason: "test_workspace" }
}>

/** @since 0.1.0 @category constructors */
export const done = <A>(value: A): Outcome<A> => ({ _tag: "Done", value })

/** @since 0.1.0 @category constructors */
export const suppressed = <A>(): Outcome<A> => ({ _tag: "Suppressed", reason: "test_workspace" })

/**
 * No adapter is configured for this port: nothing was sent or called.
 *
 * @since 0.1.0 @category errors
 */
export class NotConfigured extends Data.TaggedError("NotConfigured")<{ readonly port: "mailer" | "providers" }> {
  override get message(): string {
    return `No ${this.port} adapter is configured; nothing was sent.`
  }
}

/**
 * The adapter tried and failed (the provider answered an error, the mail relay refused).
 *
 * @since 0.1.0 @category errors
 */
export class OutboundFailed extends Data.TaggedError("OutboundFailed")<{ readonly port: "mailer" | "providers"; readonly detail: string }> {}

/** @since 0.1.0 @category tags */
export class Mailer extends Context.Tag("@service/core/Mailer")<Mailer, {
  /** Sends one email; answers the adapter's message id. */
  readonly send: (workspace: Workspace, message: EmailMessage) => Effect.Effect<Outcome<string>, NotConfigured | OutboundFailed>
}>() {}

/** @since 0.1.0 @category tags */
export class Providers extends Context.Tag("@service/core/Providers")<Providers, {
  /** Calls a provider; answers its response. */
  readonly call: (workspace: Workspace, request: ProviderRequest) => Effect.Effect<Outcome<unknown>, NotConfigured | OutboundFailed>
}>() {}

/**
 * The mailer as every runtime uses it: a test workspace's send is `Suppressed` and never reaches `inner`.
 *
 * @since 0.1.0 @category guards
 */
export const guardMailer = (inner: Mailer["Type"]): Mailer["Type"] =>
  Mailer.of({
    send: (workspace, message) =>
      workspace.isTest
        ? Effect.as(Effect.logDebug("email suppressed in a test workspace"), suppressed<string>())
        : inner.send(workspace, message)
  })

/**
 * The providers as every runtime uses them: a test workspace's call is `Suppressed` and never reaches `inner`.
 *
 * @since 0.1.0 @category guards
 */
export const guardProviders = (inner: Providers["Type"]): Providers["Type"] =>
  Providers.of({
    call: (workspace, request) =>
      workspace.isTest
        ? Effect.as(Effect.logDebug("provider call suppressed in a test workspace", request.provider), suppressed<unknown>())
        : inner.call(workspace, request)
  })

/**
 * Both ports with no adapter: every real send or call fails with `NotConfigured`; a test workspace's is
 * `Suppressed` as always.
 *
 * @since 0.1.0 @category layers
 */
export const layerNotConfigured: Layer.Layer<Mailer | Providers> = Layer.merge(
  Layer.succeed(Mailer, guardMailer({ send: () => Effect.fail(new NotConfigured({ port: "mailer" })) })),
  Layer.succeed(Providers, guardProviders({ call: () => Effect.fail(new NotConfigured({ port: "providers" })) }))
)

/**
 * Ports over the host's own adapters, guarded for test workspaces.
 *
 * @since 0.1.0 @category layers
 */
export const layer = (adapters: { readonly mailer: Mailer["Type"]; readonly providers: Providers["Type"] }): Layer.Layer<Mailer | Providers> =>
  Layer.merge(Layer.succeed(Mailer, guardMailer(adapters.mailer)), Layer.succeed(Providers, guardProviders(adapters.providers)))
