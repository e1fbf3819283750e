/**
 * The door's per-address limit behind a reverse proxy, through the real server: with `SERVICE_TRUSTED_PROXIES`
 * naming the proxy (127.0.0.1 here), a request from it is counted for the client its `X-Forwarded-For` names
 * (`Forwarded` first); a request from any other address is counted for its socket, whatever forwarded headers it
 * carries.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import { DoorLimiter } from "@service/door/DoorLimiter"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { request as httpRequest } from "node:http"
import { Running, running } from "./support/Rest.js"

const post = (port: number, localAddress: string, headers: Readonly<Record<string, string>>) =>
  Effect.async<number>((resume) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      localAddress,
      method: "POST",
      path: "/api/v1/door/src_000000000000000000000000",
      headers: { "content-type": "application/cloudevents+json", "webhook-id": "m", "webhook-timestamp": "0", "webhook-signature": "v1,AAAA", ...headers },
      agent: false
    }, (res) => {
      res.resume()
      res.on("end", () => resume(Effect.succeed(res.statusCode ?? 0)))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end("{}")
  })

const trusted = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["SERVICE_TRUSTED_PROXIES", "127.0.0.1, fd00::/8"]])).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))
)

for (const target of TestDatabase.targets()) {
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(App.layer(target.layer, Crypto.layerTest)),
    Layer.provide(trusted),
    Layer.orDie
  )

  layer(Env, { timeout: 0, excludeTestServices: true })(`the door behind a trusted proxy on ${target.name}`, (it) => {
    it.effect("counts the client a trusted proxy names, and the socket of anyone else", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const limiter = yield* DoorLimiter
        const minute = Effect.map(Clock.currentTimeMillis, (now) => Math.floor(now / 60_000))
        // Counts live in one-minute windows and a new window's first write drops the older ones: a run that
        // crossed a minute's end is made again, so the keys read back are those of one window.
        let counted: ReadonlyArray<{ readonly key: string }> = []
        for (let crossed = true; crossed;) {
          const started = yield* minute
          for (let i = 0; i < 3; i++) assert.strictEqual(yield* post(port, "127.0.0.1", { "x-forwarded-for": "1.2.3.4, 198.51.100.1" }), 401)
          assert.strictEqual(yield* post(port, "127.0.0.1", { forwarded: "for=\"198.51.100.9:443\";proto=https", "x-forwarded-for": "198.51.100.1" }), 401)
          // Not a trusted proxy: its forwarded headers are not read.
          for (let i = 0; i < 2; i++) assert.strictEqual(yield* post(port, "127.0.0.2", { "x-forwarded-for": "198.51.100.2" }), 401)
          // Which addresses were counted, once this node has written its counts.
          yield* limiter.flush
          counted = yield* Effect.orDie(sql<{ key: string }>`SELECT DISTINCT workspace_id AS key
            FROM core.rate_windows WHERE workspace_id LIKE 'door-ip:%' ORDER BY workspace_id`)
          crossed = (yield* minute) !== started
        }
        assert.deepStrictEqual(counted.map((row) => row.key), ["door-ip:127.0.0.2", "door-ip:198.51.100.1", "door-ip:198.51.100.9"])
      }))
  })
}
