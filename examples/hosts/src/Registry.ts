/**
 * A registry of this release's tarballs on loopback, for the `@service` scope only (a host's `.npmrc` says
 * `@service:registry=<url>`; every other package comes from the host's usual registry). It answers what `npm install`
 * asks of a registry: a package document (`GET /@service%2fcore`) listing the one version with its tarball address
 * and integrity, and the tarball. So a host's `package.json` names `"@service/client": "^0.1.0"` as it would against
 * the public registry, and npm resolves the internal dependencies by their ranges: a tarball that could only be
 * installed beside its siblings would fail here.
 *
 * The public registry's `@service` scope belongs to someone else (decision 0088): without the scoped line a host would
 * fetch a stranger's `@service/core`.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { basename } from "node:path"
import type { Packed } from "./Tarballs.js"

/** A running registry: its address, the requests it answered, and how to stop it. */
export interface Registry {
  readonly url: string
  /** Paths requested, in order (what a host fetched from here). */
  readonly requests: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/**
 * Serves `packed` on 127.0.0.1 at a free port, under a path of its own (`/r<random>/`): npm caches package documents
 * by address, and a later run on the same port must not be answered from an earlier run's documents.
 */
export const start = async (packed: ReadonlyArray<Packed>): Promise<Registry> => {
  const requests: Array<string> = []
  const prefix = `/r${randomBytes(6).toString("hex")}`
  let url = ""
  const byName = new Map(packed.map((p) => [p.name, p]))
  const byFile = new Map(packed.map((p) => [basename(p.file), p]))
  const server: Server = createServer((request, response) => {
    const full = decodeURIComponent(new URL(request.url ?? "/", "http://registry").pathname)
    const path = full.startsWith(`${prefix}/`) ? full.slice(prefix.length) : ""
    requests.push(`${request.method ?? "GET"} ${path || full}`)
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    if (path === "") return json(404, { error: "not found" })
    if (request.method !== "GET" && request.method !== "HEAD") return json(405, { error: "read-only registry" })
    const tarball = path.startsWith("/-/tarballs/") ? byFile.get(path.slice("/-/tarballs/".length)) : undefined
    if (tarball !== undefined) {
      response.writeHead(200, { "content-type": "application/octet-stream" })
      return response.end(readFileSync(tarball.file))
    }
    const found = byName.get(path.slice(1))
    if (found === undefined) return json(404, { error: "not found" })
    return json(200, {
      name: found.name,
      "dist-tags": { latest: found.version },
      versions: {
        [found.version]: {
          ...found.manifest,
          dist: {
            tarball: `${url}/-/tarballs/${basename(found.file)}`,
            integrity: found.integrity,
            shasum: found.shasum
          }
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("the registry has no TCP address")
  url = `http://127.0.0.1:${address.port}${prefix}`
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)))
        // npm keeps its connections alive; they hold nothing worth waiting for.
        server.closeAllConnections()
      })
  }
}
