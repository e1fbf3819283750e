// Loader-thread hooks of module-count.mjs: append each loaded module's URL to the file given at registration.
import { appendFileSync } from "node:fs"

let file

export const initialize = (data) => {
  file = data.file
}

export const load = (url, context, nextLoad) => {
  appendFileSync(file, `${url}\n`)
  return nextLoad(url, context)
}
