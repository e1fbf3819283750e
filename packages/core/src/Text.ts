/**
 * The one rule for text any input may carry, on every surface (HTTP bodies and queries, MCP arguments, CLI
 * flags, the door's events and notices): what PostgreSQL cannot store is refused before anything is stored or
 * run, as a structural refusal (400 on HTTP), never a 500.
 *
 * - a NUL character (U+0000), which no `text` or `jsonb` value holds, in any string or property name;
 * - a lone UTF-16 surrogate (`"\ud800"` in JSON), which has no UTF-8 form and which `jsonb` refuses;
 * - nesting deeper than {@link maxDepth} arrays and objects: no input of the service nests beyond a handful of
 *   levels, and a deep value would exhaust the stack of whatever walks it recursively.
 *
 * The walk is iterative, so a value nested to any depth is inspected without exhausting the stack.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"

/**
 * Levels of arrays and objects any input may nest (the door's third-party notices included).
 *
 * @since 0.1.0 @category constants
 */
export const maxDepth = 64

/**
 * What makes a value unstorable, and where: the dotted path of the field (`""` for the value itself).
 *
 * @since 0.1.0 @category models
 */
export interface Finding {
  readonly path: string
  readonly reason: "nul" | "surrogate" | "depth"
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Why `text` cannot be stored, if it cannot.
 *
 * @since 0.1.0 @category checks
 */
export const unstorableText = (text: string): Finding["reason"] | undefined =>
  text.includes("\u0000") ? "nul" : loneSurrogate.test(text) ? "surrogate" : undefined

const shortKey = (key: string): string => (key.length > 40 ? `${key.slice(0, 40)}…` : key)

/**
 * The first place in `value` that breaks the rule, walked with an explicit stack (no recursion).
 *
 * @since 0.1.0 @category checks
 */
export const inspect = (value: unknown, depthLimit: number = maxDepth): Option.Option<Finding> => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [{ value, path: "", depth: 0 }]
  const join = (path: string, key: string | number) => (path === "" ? String(key) : `${path}.${key}`)
  while (stack.length > 0) {
    const item = stack.pop()
    if (item === undefined) break
    const current = item.value
    if (typeof current === "string") {
      const reason = unstorableText(current)
      if (reason !== undefined) return Option.some({ path: item.path, reason })
    } else if (typeof current === "object" && current !== null) {
      if (item.depth >= depthLimit) return Option.some({ path: item.path, reason: "depth" })
      if (Array.isArray(current)) {
        for (let i = 0; i < current.length; i++) stack.push({ value: current[i], path: join(item.path, i), depth: item.depth + 1 })
      } else {
        for (const [key, element] of Object.entries(current)) {
          const reason = unstorableText(key)
          if (reason !== undefined) return Option.some({ path: join(item.path, shortKey(key)), reason })
          stack.push({ value: element, path: join(item.path, shortKey(key)), depth: item.depth + 1 })
        }
      }
    }
  }
  return Option.none()
}

/**
 * The structural refusal's words for a finding.
 *
 * @since 0.1.0 @category checks
 */
export const describe = (
  finding: Finding,
  depthLimit: number = maxDepth
): { readonly field?: string; readonly why: string; readonly suggestedCorrection: string } => {
  const where = finding.path === "" ? "The input" : `Field "${finding.path}"`
  const field = finding.path === "" ? {} : { field: finding.path }
  switch (finding.reason) {
    case "nul":
      return { ...field, why: `${where} contains a NUL character (U+0000), which no text field accepts.`, suggestedCorrection: "Remove the NUL characters and send the text again." }
    case "surrogate":
      return {
        ...field,
        why: `${where} contains a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not a character.`,
        suggestedCorrection: "Send well-formed Unicode text: escape characters outside the Basic Multilingual Plane as a surrogate pair, or send them as UTF-8."
      }
    case "depth":
      return {
        ...field,
        why: `${where} nests arrays and objects deeper than ${depthLimit} levels.`,
        suggestedCorrection: `Send at most ${depthLimit} levels of nesting; no input of this service needs more.`
      }
  }
}
