/**
 * A registry on loopback for the `@service` scope only, holding what `changeset publish` uploads to it: it answers
 * what `npm publish` sends (`PUT /@service%2fcore` with the tarball attached) and what `npm install` and `npm info` ask
 * (the package document listing its versions with their tarball address and integrity, and the tarball). A host's
 * `.npmrc` says `@service:registry=<url>`; every other package comes from the host's usual registry. So a host's
 * `package.json` names `"@service/client": "^0.1.0"` as it would against the public registry, and npm resolves the
 * internal dependencies by their ranges: a tarball that could only be installed beside its siblings would fail here.
 *
 * The public registry's `@service` scope belongs to someone else (decision 0088): without the scoped line a host would
 * fetch a stranger's `@service/core`.
 */
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** One published version: its manifest as npm sent it, and its tarball. */
export interface Published {
  readonly name: string
  readonly version: string
  readonly manifest: Readonly<Record<string, unknown>>
  readonly tarball: Buffer
  readonly filename: string
  readonly integrity: string
  readonly shasum: string
}

/** A running registry: its address, what was published to it, the requests it answered, and how to stop it. */
export interface Registry {
  readonly url: string
  readonly published: () => ReadonlyArray<Published>
  /** `METHOD path` of every request, in order (what a host or a publish asked of it). */
  readonly requests: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

// What `npm publish` PUTs: the package document with the new version and its tarball as a base64 attachment.
const PublishBody = Schema.parseJson(Schema.Struct({
  name: Schema.String,
  versions: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  _attachments: Schema.Record({ key: Schema.String, value: Schema.Struct({ data: Schema.String }) })
}))

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/**
 * Starts an empty registry on 127.0.0.1 at a free port, under a path of its own (`/r<random>/`): npm caches package
 * documents by address, and a later run on the same port must not be answered from an earlier run's documents.
 * Anyone may publish (the check's own loopback registry); a version is published once.
 */
export const start = async (): Promise<Registry> => {
  const requests: Array<string> = []
  const packages = new Map<string, Map<string, Published>>()
  const prefix = `/r${randomBytes(6).toString("hex")}`
  let url = ""
  const server: Server = createServer((request, response) => {
    const full = decodeURIComponent(new URL(request.url ?? "/", "http://registry").pathname)
    const path = full.startsWith(`${prefix}/`) ? full.slice(prefix.length) : ""
    const method = request.method ?? "GET"
    requests.push(`${method} ${path || full}`)
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    if (path === "") return json(404, { error: "not found" })
    if (method === "PUT") {
      return void readBody(request).then((text) => {
        const body = Schema.decodeUnknownEither(PublishBody)(text)
        if (body._tag === "Left") return json(400, { error: "not a publish document" })
        const { name, versions, _attachments } = body.right
        if (path.slice(1) !== name) return json(400, { error: `published ${name} at ${path}` })
        const existing = packages.get(name) ?? new Map<string, Published>()
        for (const [version, manifest] of Object.entries(versions)) {
          if (existing.has(version)) return json(403, { error: `${name}@${version} is already published` })
          const filename = `${name.replace("@", "").replace("/", "-")}-${version}.tgz`
          const attachment = Object.entries(_attachments).find(([key]) => key.endsWith(`-${version}.tgz`))?.[1]
          if (attachment === undefined) return json(400, { error: `no tarball attached for ${version}` })
          const tarball = Buffer.from(attachment.data, "base64")
          existing.set(version, {
            name,
            version,
            manifest,
            tarball,
            filename,
            integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
            shasum: createHash("sha1").update(tarball).digest("hex")
          })
        }
        packages.set(name, existing)
        return json(201, { ok: true })
      }, () => json(400, { error: "unreadable body" }))
    }
    if (method !== "GET" && method !== "HEAD") return json(405, { error: "method not allowed" })
    if (path.startsWith("/-/tarballs/")) {
      const filename = path.slice("/-/tarballs/".length)
      const found = [...packages.values()].flatMap((versions) => [...versions.values()]).find((p) => p.filename === filename)
      if (found === undefined) return json(404, { error: "not found" })
      response.writeHead(200, { "content-type": "application/octet-stream" })
      return response.end(found.tarball)
    }
    const versions = packages.get(path.slice(1))
    if (versions === undefined) return json(404, { error: "not found" })
    const latest = [...versions.values()].at(-1)
    return json(200, {
      name: path.slice(1),
      "dist-tags": latest === undefined ? {} : { latest: latest.version },
      versions: Object.fromEntries(
        [...versions.values()].map((p) => [
          p.version,
          { ...p.manifest, dist: { tarball: `${url}/-/tarballs/${p.filename}`, integrity: p.integrity, shasum: p.shasum } }
        ])
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("the registry has no TCP address")
  url = `http://127.0.0.1:${address.port}${prefix}`
  return {
    url,
    published: () => [...packages.values()].flatMap((versions) => [...versions.values()]),
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)))
        // npm keeps its connections alive; they hold nothing worth waiting for.
        server.closeAllConnections()
      })
  }
}
