/**
 * The typed client, Effect front door. Given the operation groups the server serves (each domain's `group`, declared
 * with `kit.typedGroup` so its type lists its operations), it has one method per operation under a key per group:
 *
 * ```ts
 * const client = yield* Client.make({ groups: { market: MarketOperations.group }, baseUrl, apiKey, workspace: "demo" })
 * const page = yield* client.market.searchSuppliers({ state: "Zacatecas", limit: 5 })
 * const rows = yield* Stream.runCollect(client.market.searchSuppliers.all({ state: "Zacatecas" }))
 * ```
 *
 * A method takes the operation's canonical input (what the HTTP route accepts) and succeeds with its decoded
 * output; it fails with a {@link ClientError.ClientError} whose `Refused` carries the operation's codec codes.
 * Method names are the operation names in camel case (`search_suppliers` -> `searchSuppliers`). Operations that page
 * (see {@link Paging}) also have `.pages(input)`, a `Stream` of pages following the sealed next cursor, and
 * `.all(input)`, a `Stream` of their rows. Nothing is listed by hand: a new operation in a group is a new method.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as Operation from "@service/core/Operation"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Call from "./Call.js"
import type * as ClientError from "./ClientError.js"
import * as Paging from "./Paging.js"

// -----------------------------------------------------------------------------
// Types derived from the declarations
// -----------------------------------------------------------------------------

/**
 * `search_suppliers` -> `searchSuppliers`.
 *
 * @since 0.1.0 @category models
 */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S

/**
 * What a declared operation's type says: its name, canonical input, output and refusal codes.
 *
 * @since 0.1.0 @category models
 */
export type Declared<Op> = Op extends Operation.Operation<
  infer Name,
  infer I,
  infer _IE,
  infer _MI,
  infer _MIE,
  infer O,
  infer _OE,
  infer _E,
  infer Code,
  infer _R
> ? { readonly name: Name; readonly input: I; readonly output: O; readonly code: Code }
  : never

/** The arguments of a call: the input may be left out when every field is optional. @since 0.1.0 @category models */
export type Args<I> = {} extends I ? [input?: I] : [input: I]

/**
 * One operation's method: a call, plus `.all` and `.pages` when it pages.
 *
 * @since 0.1.0 @category models
 */
export type Method<I, O, Code extends string> =
  & ((...args: Args<I>) => Effect.Effect<O, ClientError.ClientError<Code>>)
  & (Paging.Pages<I, O> extends true ? {
      /** Every page, following the sealed next cursor (one request per page, on demand). */
      readonly pages: (...args: Args<Paging.PageInput<I>>) => Stream.Stream<O, ClientError.ClientError<Code>>
    }
    : {})
  & (Paging.Pages<I, O> extends true ? Paging.HasRows<O> extends true ? {
        /** Every row of every page, following the sealed next cursor (one request per page, on demand). */
        readonly all: (...args: Args<Paging.PageInput<I>>) => Stream.Stream<Paging.RowOf<O>, ClientError.ClientError<Code>>
      }
    : {}
    : {})

/** @since 0.1.0 @category models */
export type MethodOf<Op> = Declared<Op> extends { readonly input: infer I; readonly output: infer O; readonly code: infer Code extends string }
  ? Method<I, O, Code>
  : never

/** A method of a group whose type does not list its operations (declared with `kit.group`). @since 0.1.0 @category models */
export type ErasedMethod = Method<Readonly<Record<string, unknown>>, unknown, string> & {
  readonly all: (input?: Readonly<Record<string, unknown>>) => Stream.Stream<unknown, ClientError.ClientError>
  readonly pages: (input?: Readonly<Record<string, unknown>>) => Stream.Stream<unknown, ClientError.ClientError>
}

/**
 * The methods of one group.
 *
 * @since 0.1.0 @category models
 */
export type GroupClient<G> = G extends { readonly declared: infer Ops extends ReadonlyArray<unknown> }
  ? { readonly [Op in Ops[number] as CamelCase<Declared<Op>["name"]>]: MethodOf<Op> }
  : { readonly [name: string]: ErasedMethod }

/**
 * The groups a client calls, under the keys the host picks (`{ market: MarketOperations.group }`).
 *
 * @since 0.1.0 @category models
 */
export type Groups = { readonly [key: string]: Operation.Group<unknown> }

/**
 * A client over `G`.
 *
 * @since 0.1.0 @category models
 */
export type Client<G extends Groups> = { readonly [K in keyof G]: GroupClient<G[K]> }

// -----------------------------------------------------------------------------
// Construction
// -----------------------------------------------------------------------------

/**
 * Where and as whom to call: the base URL (without `/api/v1`), the workspace slug of workspace-scoped groups, and
 * one credential as `Redacted`.
 *
 * @since 0.1.0 @category models
 */
export type Settings =
  & { readonly baseUrl: string; readonly workspace?: string | undefined }
  & (
    | { readonly apiKey: Redacted.Redacted<string>; readonly bearerToken?: undefined }
    | { readonly bearerToken: Redacted.Redacted<string>; readonly apiKey?: undefined }
  )

/** @since 0.1.0 @category models */
export type Options<G extends Groups> = Settings & { readonly groups: G }

/**
 * The connection of `settings`.
 *
 * @since 0.1.0 @category constructors
 */
export const connectionOf = (settings: Settings): Call.Connection => ({
  baseUrl: settings.baseUrl,
  workspace: settings.workspace,
  credential: settings.apiKey !== undefined ? { kind: "api_key", secret: settings.apiKey } : { kind: "bearer", secret: settings.bearerToken }
})

/**
 * One call of an erased operation, for a front door to wrap: the call itself and its paging shape.
 *
 * @since 0.1.0 @category models
 */
export interface Entry {
  readonly target: Call.Target
  readonly shape: Option.Option<Paging.Shape>
}

/**
 * Every operation of `groups` served on HTTP, by group key and method name. Two operations of a group with the
 * same camel-case name cannot both be methods: refused here rather than one hiding the other.
 *
 * @since 0.1.0 @category constructors
 */
export const entries = (groups: Groups): ReadonlyMap<string, ReadonlyMap<string, Entry>> => {
  const byGroup = new Map<string, ReadonlyMap<string, Entry>>()
  for (const [key, group] of Object.entries(groups)) {
    const methods = new Map<string, Entry>()
    for (const operation of group.operations) {
      if (!operation.surfaces.http) continue
      const name = operation.name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
      if (methods.has(name)) throw new Error(`Group ${group.name}: two operations are named ${name} in camel case.`)
      methods.set(name, { target: { group, operation }, shape: Paging.shapeOf(operation) })
    }
    byGroup.set(key, methods)
  }
  return byGroup
}

/**
 * The pages of one call: the first with `input`, each next one with the previous page's cursor.
 *
 * @since 0.1.0 @category paging
 */
export const pagesOf = <A, E, R>(
  shape: Paging.Shape,
  input: unknown,
  call: (input: unknown) => Effect.Effect<A, E, R>
): Stream.Stream<A, E, R> => {
  const base: Readonly<Record<string, unknown>> = typeof input === "object" && input !== null ? { ...input } : {}
  return Stream.paginateEffect<Readonly<Record<string, unknown>>, A, E, R>(base, (sent) =>
    call(sent).pipe(
      Effect.map((page): readonly [A, Option.Option<Readonly<Record<string, unknown>>>] => [
        page,
        Option.map(shape.next(page, sent), (patch) => ({ ...base, ...patch }))
      ])
    ))
}

const erasedMethod = (entry: Entry, run: (input: unknown) => Effect.Effect<unknown, ClientError.ClientError>) => {
  const unsupported = (what: string): Stream.Stream<unknown, ClientError.ClientError> =>
    Stream.dieMessage(`${entry.target.operation.name} ${what}.`)
  const pages = (input?: unknown) =>
    Option.match(entry.shape, { onNone: () => unsupported("does not page"), onSome: (shape) => pagesOf(shape, input, run) })
  const all = (input?: unknown) =>
    Option.match(entry.shape, {
      onNone: () => unsupported("does not page"),
      onSome: (shape) =>
        Option.match(shape.rows, {
          onNone: () => unsupported("has no single rows array: use .pages"),
          onSome: (rows) => Stream.flatMap(pagesOf(shape, input, run), (page) => Stream.fromIterable(rows(page)))
        })
    })
  return Object.assign((input?: unknown) => run(input), { all, pages })
}

/**
 * Where the erased client built from the declarations meets the type derived from the same declarations: both are
 * read from `G` (the runtime from its operations, the type from its `declared` tuple), so they list the same
 * methods; `ClientTest` checks it. TypeScript cannot relate a value built by a loop to a mapped type.
 */
const derived = <T>(erased: unknown): T => erased as T

/**
 * The client over `options.groups`, calling through the `HttpClient` in context (`FetchHttpClient.layer`,
 * `NodeHttpClient.layerUndici`...).
 *
 * @since 0.1.0 @category constructors
 */
export const make = <const G extends Groups>(options: Options<G>): Effect.Effect<Client<G>, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (http) => {
    const connection = connectionOf(options)
    const client: Record<string, Record<string, unknown>> = {}
    for (const [key, methods] of entries(options.groups)) {
      const group: Record<string, unknown> = {}
      for (const [name, entry] of methods) {
        group[name] = erasedMethod(entry, (input) => Effect.provideService(Call.call(connection, entry.target, input), HttpClient.HttpClient, http))
      }
      client[key] = group
    }
    return derived<Client<G>>(client)
  })

/**
 * The client as a service under the host's own tag:
 *
 * ```ts
 * class Api extends Context.Tag("Api")<Api, Client.Client<typeof groups>>() {}
 * const ApiLive = Client.layer(Api, { groups, baseUrl, apiKey, workspace })
 * ```
 *
 * @since 0.1.0 @category layers
 */
export const layer = <Id, const G extends Groups>(
  tag: Context.Tag<Id, Client<G>>,
  options: Options<G>
): Layer.Layer<Id, never, HttpClient.HttpClient> => Layer.effect(tag, make(options))

/**
 * The same with the settings read from `Config` (the host names the keys, e.g. `Config.redacted("SERVICE_API_KEY")`).
 *
 * @since 0.1.0 @category layers
 */
export const layerConfig = <Id, const G extends Groups>(
  tag: Context.Tag<Id, Client<G>>,
  groups: G,
  settings: Config.Config<Settings>
): Layer.Layer<Id, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.effect(tag, Effect.flatMap(settings, (read) => make({ ...read, groups })))
