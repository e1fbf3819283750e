/**
 * `service events listen` as a developer runs it: the server started with SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES
 * on (read through its configuration, as `npm start` reads it), the binary in its own process listening on
 * 127.0.0.1, a signed CloudEvent posted to the door over HTTP; the CLI prints the verified `contact.created` the
 * server delivered to it, forwards it with its signature to a developer's app (`--forward-to`), and when the process
 * gets SIGTERM it stops its Destination.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Target, target } from "./support/Target.js"

const binPath = fileURLToPath(new URL("../bin/service.js", import.meta.url))

/** The owner's API key of the workspace `acme`, with the scopes a developer's key has. */
class OwnerKey extends Context.Tag("OwnerKey")<OwnerKey, string>() {}

const prepared = Layer.effect(
  OwnerKey,
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    const ana = yield* accounts.createPerson({ displayName: "Ana" })
    yield* accounts.addMember({ workspaceId: acme.id, personId: ana.id, role: "owner" })
    const issued = yield* accounts.issueCredential({
      workspaceId: acme.id,
      kind: "api_key",
      label: "ana's key",
      scopes: ["events:write", "door:admin", "commercial:read"],
      personId: ana.id
    })
    return Redacted.value(issued.secret)
  }).pipe(Effect.orDie)
)

// The setting as the server's configuration gives it, without changing this process's environment.
const allowingPrivateAddresses = AddressGuard.layerConfig.pipe(
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES", "true"]])))),
  Layer.orDie
)

interface Running {
  readonly stderr: () => string
  readonly stdout: () => string
  readonly signal: (signal: NodeJS.Signals) => void
  readonly exited: Promise<number>
}

/** The binary with only PATH; its output read as it comes. No time limit: a busy machine is slow, not wrong. */
const start = (args: ReadonlyArray<string>): Running => {
  const child = spawn(process.execPath, [binPath, ...args], { env: { PATH: process.env["PATH"] ?? "" }, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  return {
    stderr: () => err,
    stdout: () => out,
    signal: (signal) => void child.kill(signal),
    exited: new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal === null ? -1 : 128))))
  }
}

/** Waits, however long it takes, until `found` finds something in what the process printed (or it exits). */
const waitFor = <A>(running: Running, found: () => A | undefined) =>
  Effect.promise(async () => {
    let exited = false
    void running.exited.then(() => (exited = true))
    for (;;) {
      const value = found()
      if (value !== undefined) return value
      if (exited) throw new Error(`the CLI exited:\n${running.stderr()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })

const http = (url: string, init: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string }) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, body: await response.text() }
  })

const CreatedSource = Schema.parseJson(Schema.Struct({ source: Schema.Struct({ id: Schema.String }), secret: Schema.String }))
const Printed = Schema.parseJson(Schema.Struct({
  verified: Schema.Literal(true),
  webhook_id: Schema.String,
  name: Schema.String,
  event_id: Schema.String,
  subject: Schema.String,
  data: Schema.Struct({ contact_id: Schema.String, name: Schema.String })
}))
const Subscriptions = Schema.parseJson(Schema.Struct({
  subscriptions: Schema.Array(Schema.Struct({ id: Schema.String, kind: Schema.String, address: Schema.String, events: Schema.Array(Schema.String), state: Schema.String }))
}))

/** A CloudEvent signed the way docs/door.md shows. */
const signedNotice = (secret: string, id: string) => {
  const body = JSON.stringify({
    specversion: "1.0",
    id: "lead-1",
    source: "https://forms.example.com/contact",
    type: "contact.created",
    data: { name: "Ana Ruiz", email: "ana@acme.mx", company: "Acme" }
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")
  return {
    body,
    headers: {
      "content-type": "application/cloudevents+json",
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${signature}`
    }
  }
}

/** A developer's app: records what it is sent and answers 204; closed with the scope. */
const app = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly url: string; readonly received: Array<{ readonly headers: NodeHttp.IncomingHttpHeaders; readonly body: string }>; readonly server: NodeHttp.Server }>((resolve) => {
      const received: Array<{ readonly headers: NodeHttp.IncomingHttpHeaders; readonly body: string }> = []
      const server = NodeHttp.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
          response.writeHead(204).end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address: AddressInfo | string | null = server.address()
        const port = address !== null && typeof address === "object" ? address.port : 0
        resolve({ url: `http://127.0.0.1:${port}/app`, received, server })
      })
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

const headerText = (headers: NodeHttp.IncomingHttpHeaders, name: string): string => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(" ") : value ?? ""
}

// PGlite, and PostgreSQL too when DATABASE_URL is set.
for (const first of TestDatabase.targets()) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(first.layer, Crypto.layerTest, { addressGuard: allowingPrivateAddresses })),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`service events listen on ${first.name}`, (it) => {
    it.effect(
      "prints the verified contact.created a signed door notice caused, and stops its Destination on SIGTERM",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const key = yield* OwnerKey
          const developerApp = yield* app
          const api = `${baseUrl}/api/v1/workspaces/acme`
          // Killed however the test ends, so a failure leaves no process behind.
          const listen = yield* Effect.acquireRelease(
            Effect.sync(() => start(["--base-url", baseUrl, "--api-key", key, "--workspace", "acme", "events", "listen", "--events", "contact.created", "--json", "--forward-to", developerApp.url])),
            (running) => Effect.sync(() => running.signal("SIGKILL"))
          )
          const destination = yield* waitFor(listen, () => /Destination (dst_[0-9a-f]+)/.exec(listen.stderr())?.[1])
          assert.match(listen.stderr(), /^Ready: listening on http:\/\/127\.0\.0\.1:\d+ for contact\.created/)
          const secret = yield* waitFor(listen, () => /Signing secret: (whsec_\S+)/.exec(listen.stderr())?.[1])

          const listed = Schema.decodeUnknownSync(Subscriptions)((yield* http(`${api}/events/subscriptions`, { headers: { "x-api-key": key } })).body)
          const mine = listed.subscriptions.find((s) => s.id === destination)
          assert.deepStrictEqual([mine?.kind, mine?.state, mine?.events], ["destination", "active", ["contact.created"]])
          assert.match(mine?.address ?? "", /^http:\/\/127\.0\.0\.1:\d+$/)

          const source = yield* http(`${api}/door/sources`, {
            method: "POST",
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: JSON.stringify({ name: "Web form" })
          })
          assert.strictEqual(source.status, 200, source.body)
          const created = Schema.decodeUnknownSync(CreatedSource)(source.body)
          const notice = signedNotice(created.secret, "msg_lead_1")
          const sent = yield* http(`${baseUrl}/api/v1/door/${created.source.id}`, { method: "POST", headers: notice.headers, body: notice.body })
          assert.strictEqual(sent.status, 202, sent.body)

          const line = yield* waitFor(listen, () => listen.stdout().split("\n").find((l) => l.includes("contact.created")))
          const printed = Schema.decodeUnknownSync(Printed)(line)
          assert.strictEqual(printed.name, "contact.created")
          assert.strictEqual(printed.webhook_id, printed.event_id)
          assert.strictEqual(printed.subject, `contact/${printed.data.contact_id}`)
          assert.strictEqual(printed.data.name, "Ana Ruiz")
          // The ledger never carries the email.
          assert.notInclude(line, "ana@acme.mx")

          // The app got the same body and signature headers, and its answer is the server's.
          assert.include(line, `"forwarded":"HTTP 204"`)
          const [forwarded] = developerApp.received
          if (forwarded === undefined) return assert.fail("nothing was forwarded")
          const id = headerText(forwarded.headers, "webhook-id")
          const timestamp = headerText(forwarded.headers, "webhook-timestamp")
          assert.strictEqual(id, printed.webhook_id)
          const expected = createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${id}.${timestamp}.${forwarded.body}`).digest("base64")
          assert.include(headerText(forwarded.headers, "webhook-signature").split(" "), `v1,${expected}`)
          assert.include(forwarded.body, printed.data.contact_id)

          listen.signal("SIGTERM")
          yield* Effect.promise(() => listen.exited)
          assert.include(listen.stderr(), `Stopped Destination ${destination}.`)
          const after = Schema.decodeUnknownSync(Subscriptions)((yield* http(`${api}/events/subscriptions`, { headers: { "x-api-key": key } })).body)
          assert.strictEqual(after.subscriptions.find((s) => s.id === destination)?.state, "stopped")
        }).pipe(Effect.scoped),
      { timeout: 0 }
    )
  })
}
