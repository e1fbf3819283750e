/**
 * The tarball inspection finds what makes a package unusable in a host, on tarballs made here with one fault each:
 * an export a host resolves to a TypeScript source, a missing target, `effect` as a dependency, an import nobody
 * declared, an internal range this release does not satisfy, no LICENSE, a `files` entry holding nothing. A sound
 * one has no problem.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Tarballs from "../src/Tarballs.js"

const soundManifest = {
  name: "@service/sample",
  version: "0.3.0",
  files: ["dist", "src"],
  exports: {
    ".": { "@service/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
    "./package.json": "./package.json",
    "./internal/*": null,
    "./*": { "@service/source": "./src/*.ts", types: "./dist/*.d.ts", default: "./dist/*.js" }
  },
  dependencies: { "@service/core": "^0.3.0", pg: "^8.16.0" },
  peerDependencies: { effect: "^3.22.2" }
}

const soundFiles: Record<string, string> = {
  LICENSE: "MIT",
  "src/index.ts": `export * as Thing from "./Thing.js"\n`,
  "src/Thing.ts": `import * as Effect from "effect/Effect"\nexport const thing = Effect.void\n`,
  "dist/index.js": `export * as Thing from "./Thing.js";\n`,
  "dist/index.d.ts": `export * as Thing from "./Thing.js";\n`,
  "dist/Thing.js": `import * as Effect from "effect/Effect";\nimport pg from "pg";\nimport { readFile } from "node:fs";\nexport const thing = Effect.void;\n`,
  "dist/Thing.d.ts": `import * as Effect from "effect/Effect";\nimport type { Core } from "@service/core/Core";\nexport declare const thing: Effect.Effect<void>;\n`
}

const core: Tarballs.Packed = {
  name: "@service/core",
  version: "0.3.0",
  file: "",
  unpacked: "",
  manifest: { name: "@service/core", version: "0.3.0" },
  files: [],
  size: 0,
  unpackedSize: 0,
  integrity: "",
  shasum: ""
}

// A tarball's contents written to a folder, as `fromRegistry` unpacks one.
const packedFrom = (folder: string, manifest: Tarballs.Manifest, files: Record<string, string>): Tarballs.Packed => {
  const unpacked = join(folder, "unpacked")
  rmSync(unpacked, { recursive: true, force: true })
  for (const [path, text] of Object.entries({ ...files, "package.json": JSON.stringify(manifest) })) {
    mkdirSync(dirname(join(unpacked, path)), { recursive: true })
    writeFileSync(join(unpacked, path), text)
  }
  return { ...core, name: manifest.name, version: manifest.version, unpacked, manifest, files: [...Object.keys(files), "package.json"].sort() }
}

describe("Tarballs.problems", () => {
  const folder = mkdtempSync(join(tmpdir(), "service-tarball-"))
  afterAll(() => rmSync(folder, { recursive: true, force: true }))
  const inspect = (manifest: Tarballs.Manifest, files: Record<string, string> = soundFiles) => {
    const packed = packedFrom(folder, manifest, files)
    return Tarballs.problems(packed, [core, packed])
  }

  it("finds nothing wrong with a sound tarball", () => {
    assert.deepStrictEqual(inspect(soundManifest), [])
  })

  it("finds an export a host would resolve to a TypeScript source, and a target the tarball lacks", () => {
    const problems = inspect({
      ...soundManifest,
      exports: { ...soundManifest.exports, ".": { types: "./dist/index.d.ts", default: "./src/index.ts" }, "./extra": { types: "./dist/Extra.d.ts", default: "./dist/Extra.js" } }
    })
    assert.include(problems, `exports["."][default] names ./src/index.ts, not built output`)
    assert.include(problems, `exports["./extra"][types] names ./dist/Extra.d.ts, not in the tarball`)
  })

  it("finds a module whose built JavaScript or declarations are missing for the ./* pattern", () => {
    const { ["dist/Thing.d.ts"]: _declarations, ...files } = soundFiles
    assert.include(inspect(soundManifest, files), `exports["./*"][types] names ./dist/Thing.d.ts, not in the tarball`)
  })

  it("finds effect as a dependency, and an import declared nowhere", () => {
    const problems = inspect({ ...soundManifest, dependencies: { "@service/core": "^0.3.0", effect: "^3.22.2" }, peerDependencies: {} })
    assert.include(problems, "effect is a dependency, not a peer dependency")
    assert.include(problems, "dist/Thing.js imports pg, which is not a dependency or peer dependency")
  })

  it("finds an internal dependency pinned or out of this release's range, or not in it", () => {
    assert.include(inspect({ ...soundManifest, dependencies: { ...soundManifest.dependencies, "@service/core": "0.3.0" } }), "depends on @service/core at 0.3.0: not a range")
    assert.include(inspect({ ...soundManifest, dependencies: { ...soundManifest.dependencies, "@service/core": "^0.2.0" } }), "depends on @service/core@^0.2.0, but this release has 0.3.0")
    assert.include(inspect({ ...soundManifest, dependencies: { ...soundManifest.dependencies, "@service/other": "^0.3.0" } }), "depends on @service/other, which this release does not publish")
  })

  it("finds a missing LICENSE and a files entry that holds nothing", () => {
    const { LICENSE: _licence, ...files } = soundFiles
    const problems = inspect({ ...soundManifest, files: ["dist", "src", "migrations"] }, files)
    assert.include(problems, "no LICENSE file")
    assert.include(problems, `"files" lists migrations, which holds nothing`)
  })
})
