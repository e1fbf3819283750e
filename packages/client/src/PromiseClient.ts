/**
 * The typed client for hosts that do not use Effect: the same methods as {@link Client.Client}, returning promises
 * that reject with the same tagged errors (`error._tag === "Refused"`, `error instanceof ClientError.Refused`), and
 * `.all(input)` / `.pages(input)` as async iterables:
 *
 * ```ts
 * const client = createClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "svc_key_…", workspace: "demo", groups: { market: MarketOperations.group } })
 * for await (const row of client.market.searchSuppliers.all({ state: "Zacatecas", limit: 50 })) console.log(row.name)
 * ```
 *
 * Requests go through the platform's `fetch` unless `fetch` is given.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Call from "./Call.js"
import * as Client from "./Client.js"
import type * as ClientError from "./ClientError.js"
import type * as Paging from "./Paging.js"

/**
 * One operation's method. A promise rejects with a {@link ClientError.ClientError} (promises carry no error type).
 *
 * @since 0.1.0 @category models
 */
export type Method<I, O> =
  & ((...args: Client.Args<I>) => Promise<O>)
  & (Paging.Pages<I, O> extends true ? {
      /** Every page, following the sealed next cursor (one request per page, as the loop asks). */
      readonly pages: (...args: Client.Args<Paging.PageInput<I>>) => AsyncIterable<O>
    }
    : {})
  & (Paging.Pages<I, O> extends true ? Paging.HasRows<O> extends true ? {
        /** Every row of every page. */
        readonly all: (...args: Client.Args<Paging.PageInput<I>>) => AsyncIterable<Paging.RowOf<O>>
      }
    : {}
    : {})

/** @since 0.1.0 @category models */
export type MethodOf<Op> = Client.Declared<Op> extends { readonly input: infer I; readonly output: infer O } ? Method<I, O> : never

/** @since 0.1.0 @category models */
export type ErasedMethod = ((input?: Readonly<Record<string, unknown>>) => Promise<unknown>) & {
  readonly all: (input?: Readonly<Record<string, unknown>>) => AsyncIterable<unknown>
  readonly pages: (input?: Readonly<Record<string, unknown>>) => AsyncIterable<unknown>
}

/** @since 0.1.0 @category models */
export type GroupClient<G> = G extends { readonly declared: infer Ops extends ReadonlyArray<unknown> }
  ? { readonly [Op in Ops[number] as Client.CamelCase<Client.Declared<Op>["name"]>]: MethodOf<Op> }
  : { readonly [name: string]: ErasedMethod }

/** @since 0.1.0 @category models */
export type PromiseClient<G extends Client.Groups> = { readonly [K in keyof G]: GroupClient<G[K]> }

/**
 * The options of {@link createClient}: the credential as text or `Redacted`.
 *
 * @since 0.1.0 @category models
 */
export type Options<G extends Client.Groups> =
  & { readonly groups: G; readonly baseUrl: string; readonly workspace?: string | undefined; readonly fetch?: typeof globalThis.fetch | undefined }
  & (
    | { readonly apiKey: string | Redacted.Redacted<string>; readonly bearerToken?: undefined }
    | { readonly bearerToken: string | Redacted.Redacted<string>; readonly apiKey?: undefined }
  )

const redacted = (secret: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(secret) ? secret : Redacted.make(secret)

const derived = <T>(erased: unknown): T => erased as T

/**
 * The promise client over `options.groups`.
 *
 * @since 0.1.0 @category constructors
 */
export const createClient = <const G extends Client.Groups>(options: Options<G>): PromiseClient<G> => {
  const connection = Client.connectionOf(
    options.apiKey !== undefined
      ? { baseUrl: options.baseUrl, workspace: options.workspace, apiKey: redacted(options.apiKey) }
      : { baseUrl: options.baseUrl, workspace: options.workspace, bearerToken: redacted(options.bearerToken) }
  )
  const fetch = options.fetch
  // A rejection is the error itself (not Effect's FiberFailure), so hosts can read `_tag` and the block.
  const run = <A>(effect: Effect.Effect<A, ClientError.ClientError, HttpClient.HttpClient>): Promise<A> =>
    Effect.runPromiseExit(
      Effect.provide(effect, FetchHttpClient.layer).pipe(
        (provided) => fetch === undefined ? provided : Effect.provideService(provided, FetchHttpClient.Fetch, fetch)
      )
    ).then((exit) =>
      Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause))
    )
  const client: Record<string, Record<string, unknown>> = {}
  for (const [key, methods] of Client.entries(options.groups)) {
    const group: Record<string, unknown> = {}
    for (const [name, entry] of methods) {
      const call = (input?: unknown) => run(Call.call(connection, entry.target, input))
      const shapeOf = (): Paging.Shape =>
        Option.getOrThrowWith(entry.shape, () => new Error(`${entry.target.operation.name} does not page.`))
      async function* pages(input?: unknown): AsyncGenerator<unknown> {
        const shape = shapeOf()
        const base: Readonly<Record<string, unknown>> = typeof input === "object" && input !== null ? { ...input } : {}
        let sent: Readonly<Record<string, unknown>> | undefined = base
        while (sent !== undefined) {
          const page = await call(sent)
          yield page
          sent = Option.getOrUndefined(Option.map(shape.next(page, sent), (patch) => ({ ...base, ...patch })))
        }
      }
      async function* all(input?: unknown): AsyncGenerator<unknown> {
        const rows = Option.getOrThrowWith(shapeOf().rows, () => new Error(`${entry.target.operation.name} has no single rows array: use .pages.`))
        for await (const page of pages(input)) yield* rows(page)
      }
      group[name] = Object.assign(call, { all, pages })
    }
    client[key] = group
  }
  return derived<PromiseClient<G>>(client)
}
