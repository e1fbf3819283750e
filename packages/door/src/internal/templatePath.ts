/**
 * The small path language of template mappings. A path names where a value sits in a decoded notice:
 *
 * - `a.b.c`: property names (spaces allowed: `payload.data.First Name`);
 * - `q*_*email*`: a name with `*` matches every property whose name fits, case-insensitively, in order
 *   (Jotform's `q4_email`, Webflow's `Email 2`);
 * - `list[0]`: an element by position; `list[]` every element;
 * - `list[type=INPUT_EMAIL]`: the elements whose field equals the text; `[label~company]` whose field contains
 *   it, case-insensitively; the field may be dotted (`[field.id=...]`);
 * - `[id=@data.primary_email_address_id]`: compared with the value at another path of the same notice (Clerk's
 *   primary email, Typeform's answer to the question titled "first name");
 * - `header:x-shopify-topic`: a request header (names are case-insensitive).
 *
 * A path yields every candidate it reaches; the reader keeps the first one that is a usable text (a non-empty
 * string, or a finite number written in decimal), so a wildcard or a filter matching several entries falls
 * through the ones that do not carry the value.
 */
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"

type Operand = { readonly kind: "literal"; readonly text: string } | { readonly kind: "ref"; readonly path: Path }

type Step =
  | { readonly kind: "key"; readonly key: string }
  | { readonly kind: "glob"; readonly pattern: RegExp }
  | { readonly kind: "index"; readonly index: number }
  | { readonly kind: "each" }
  | {
    readonly kind: "where"
    readonly field: ReadonlyArray<string>
    readonly op: "=" | "~"
    readonly operand: Operand
  }

/** A compiled path. */
export type Path =
  | { readonly kind: "header"; readonly name: string }
  | { readonly kind: "body"; readonly steps: ReadonlyArray<Step> }

/** Request headers as received; names are matched case-insensitively. */
export type HeaderRecord = { readonly [name: string]: string | undefined }

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// The index of the `]` closing the `[` at `open`, counting nested brackets.
const closingBracket = (text: string, open: number): number => {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === "[") depth++
    else if (text[i] === "]" && --depth === 0) return i
  }
  return -1
}

const compileFilter = (inner: string): Either.Either<Step, string> => {
  if (inner === "" || inner === "*") return Either.right({ kind: "each" })
  if (/^\d+$/.test(inner)) return Either.right({ kind: "index", index: Number(inner) })
  const at = inner.search(/[=~]/)
  if (at <= 0) return Either.left(`filter [${inner}] needs field=value or field~text`)
  const field = inner.slice(0, at).trim().split(".")
  const op = inner[at] === "=" ? "=" : "~"
  const right = inner.slice(at + 1).trim()
  if (!right.startsWith("@")) return Either.right({ kind: "where", field, op, operand: { kind: "literal", text: right } })
  return Either.map(compile(right.slice(1)), (path) => ({ kind: "where", field, op, operand: { kind: "ref", path } }))
}

const compileSteps = (text: string): Either.Either<ReadonlyArray<Step>, string> => {
  const steps: Array<Step> = []
  let i = 0
  while (i < text.length) {
    let end = i
    while (end < text.length && text[end] !== "." && text[end] !== "[") end++
    const key = text.slice(i, end)
    if (key.includes("]")) return Either.left(`unexpected ] in ${JSON.stringify(text)}`)
    if (key.length > 0) {
      steps.push(
        key.includes("*")
          ? { kind: "glob", pattern: new RegExp(`^${key.split("*").map(escapeRegExp).join(".*")}$`, "i") }
          : { kind: "key", key }
      )
    } else if (text[end] !== "[") {
      return Either.left(`empty name in ${JSON.stringify(text)}`)
    }
    i = end
    while (text[i] === "[") {
      const close = closingBracket(text, i)
      if (close === -1) return Either.left(`unclosed [ in ${JSON.stringify(text)}`)
      const step = compileFilter(text.slice(i + 1, close))
      if (Either.isLeft(step)) return Either.left(step.left)
      steps.push(step.right)
      i = close + 1
    }
    if (i < text.length) {
      if (text[i] !== ".") return Either.left(`expected . at ${i} in ${JSON.stringify(text)}`)
      i++
      if (i === text.length) return Either.left(`path ends with . in ${JSON.stringify(text)}`)
    }
  }
  return steps.length === 0 ? Either.left("empty path") : Either.right(steps)
}

/** Compiles a path, or says why it is not one. */
export const compile = (text: string): Either.Either<Path, string> => {
  const trimmed = text.trim()
  if (trimmed.toLowerCase().startsWith("header:")) {
    const name = trimmed.slice("header:".length).trim().toLowerCase()
    return name.length === 0 ? Either.left("header: needs a name") : Either.right({ kind: "header", name })
  }
  return Either.map(compileSteps(trimmed), (steps) => ({ kind: "body", steps }))
}

/** The value of a header, looked up case-insensitively. */
export const header = (headers: HeaderRecord, name: string): string | undefined => {
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined && key.toLowerCase() === wanted) return value
  }
  return undefined
}

/** A candidate as a usable text: a trimmed non-empty string or a finite number; anything else is no value. */
export const asText = (value: unknown): string | null => {
  if (Predicate.isString(value)) {
    const trimmed = value.trim()
    return trimmed.length === 0 ? null : trimmed
  }
  if (Predicate.isNumber(value) && Number.isFinite(value)) return String(value)
  return null
}

// Array.isArray narrows to any[]; this keeps the elements unknown.
const asList = (value: unknown): ReadonlyArray<unknown> | undefined => (Array.isArray(value) ? value : undefined)

const child = (value: unknown, key: string): ReadonlyArray<unknown> =>
  Predicate.isRecord(value) && Object.hasOwn(value, key) ? [value[key]] : []

const descend = (value: unknown, keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((current, key) => (Predicate.isRecord(current) && Object.hasOwn(current, key) ? current[key] : undefined), value)

const firstText = (values: ReadonlyArray<unknown>): string | null => {
  for (const value of values) {
    const text = asText(value)
    if (text !== null) return text
  }
  return null
}

const apply = (step: Step, value: unknown, root: unknown, headers: HeaderRecord): ReadonlyArray<unknown> => {
  switch (step.kind) {
    case "key":
      return child(value, step.key)
    case "glob":
      return Predicate.isRecord(value)
        ? Object.entries(value).filter(([key]) => step.pattern.test(key)).map(([, item]) => item)
        : []
    case "index": {
      const list = asList(value)
      return list !== undefined && step.index < list.length ? [list[step.index]] : []
    }
    case "each":
      return asList(value) ?? []
    case "where": {
      const list = asList(value)
      if (list === undefined) return []
      const wanted = step.operand.kind === "literal"
        ? step.operand.text
        : firstText(evaluate(step.operand.path, root, headers))
      if (wanted === null) return []
      return list.filter((element) => {
        const actual = asText(descend(element, step.field))
        if (actual === null) return false
        return step.op === "=" ? actual === wanted : actual.toLowerCase().includes(wanted.toLowerCase())
      })
    }
  }
}

/** Every candidate the path reaches in the notice (or the header's value), in order. */
export const evaluate = (path: Path, root: unknown, headers: HeaderRecord): ReadonlyArray<unknown> => {
  if (path.kind === "header") {
    const value = header(headers, path.name)
    return value === undefined ? [] : [value]
  }
  return path.steps.reduce<ReadonlyArray<unknown>>(
    (values, step) => values.flatMap((value) => apply(step, value, root, headers)),
    [root]
  )
}

const cache = new Map<string, Either.Either<Path, string>>()

const compileCached = (text: string): Either.Either<Path, string> => {
  const known = cache.get(text)
  if (known !== undefined) return known
  const compiled = compile(text)
  // Template paths are few; the bound only matters once users bring their own mappings.
  if (cache.size >= 1024) cache.clear()
  cache.set(text, compiled)
  return compiled
}

/** The first usable text the path reaches, or null (also for a path that does not compile). */
export const read = (text: string, root: unknown, headers: HeaderRecord): string | null => {
  const path = compileCached(text)
  return Either.isRight(path) ? firstText(evaluate(path.right, root, headers)) : null
}
