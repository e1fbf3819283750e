import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** A file under the package's `data/webhooks/`, parsed as JSON (the tests decode what they read). */
export const readJson = (relative: string): unknown =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../data/webhooks/${relative}`, import.meta.url)), "utf8"))
