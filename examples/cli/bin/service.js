#!/usr/bin/env node
// Runs the TypeScript sources with no build step for the user. The workspace's TypeScript is bundled once
// into node_modules/.cache/service-bin and reused while its inputs are unchanged (see start.js: about half
// the start time of loading through tsx). If that bundle cannot be built, tsx is registered as an ESM loader
// for this process (module.register, Node >= 20.6) and the entry point is imported through it.
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundled } from "./start.js"

const entry = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const cache = fileURLToPath(new URL("../node_modules/.cache/service-bin/", import.meta.url))
const bundle = process.env["SERVICE_BIN_NO_BUNDLE"] === "1" ? undefined : await bundled(entry, cache)
if (bundle !== undefined) {
  await import(pathToFileURL(bundle).href)
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import(pathToFileURL(entry).href)
}
