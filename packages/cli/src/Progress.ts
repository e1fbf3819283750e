/**
 * Progress on stderr for long work: a redrawn bar on a terminal, a line every few seconds otherwise (logs and
 * CI), and nothing on stdout, which belongs to results.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/** @since 0.1.0 @category models */
export interface ProgressBar {
  readonly update: (done: number) => Effect.Effect<void>
  readonly finish: (summary: string) => Effect.Effect<void>
}

const WIDTH = 28

/**
 * A progress bar for `label` towards `total` units (`unit` names them in the output).
 *
 * @since 0.1.0 @category constructors
 */
export const make = (label: string, total: number | undefined, unit = "rows"): ProgressBar => {
  const tty = process.stderr.isTTY === true
  const started = performance.now()
  let lastLine = 0
  const render = (done: number): string => {
    const seconds = (performance.now() - started) / 1000
    const rate = seconds > 0 ? Math.round(done / seconds) : 0
    if (total === undefined || total <= 0) return `${label}  ${done.toLocaleString("en")} ${unit}  ${rate.toLocaleString("en")}/s`
    const ratio = Math.min(1, done / total)
    const filled = Math.round(ratio * WIDTH)
    return `${label}  [${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${Math.round(ratio * 100)}%  ${
      done.toLocaleString("en")
    }/${total.toLocaleString("en")} ${unit}  ${rate.toLocaleString("en")}/s`
  }
  return {
    update: (done) =>
      Effect.sync(() => {
        if (tty) {
          process.stderr.write(`\r${render(done)}\u001b[K`)
        } else if (performance.now() - lastLine > 5000) {
          lastLine = performance.now()
          process.stderr.write(`${render(done)}\n`)
        }
      }),
    finish: (summary) =>
      Effect.sync(() => {
        process.stderr.write(`${tty ? "\r\u001b[K" : ""}${label}  ${summary}\n`)
      })
  }
}
