/**
 * The server host (a) calls: `npm start`'s layers (`Server.layer` over `App.app`) on a free loopback port, over
 * PGlite with the demo corpus published, with a fixed demo API key.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/** The demo owner's API key the server is started with. */
export const API_KEY = "svc_key_hosts_demo_0123456789abcdef"

/** The running server's address. */
export class Running extends Context.Tag("@service/example-hosts/Running")<Running, { readonly baseUrl: string }>() {}

const address = Layer.effect(
  Running,
  Effect.gen(function*() {
    const served = (yield* HttpServer.HttpServer).address
    if (served._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${served.port}` }
  })
)

/** The server, listening while the layer lives. */
export const layer: Layer.Layer<Running> = address.pipe(
  Layer.provide(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
  Layer.provideMerge(Layer.effectDiscard(Effect.orDie(ensureDemo(Option.some(Redacted.make(API_KEY)))))),
  Layer.provide(App.layer(TestDatabase.prepared(TestDatabase.pglite, DemoSnapshot.over(App.migrations)), Crypto.layerTest)),
  Layer.orDie
)
