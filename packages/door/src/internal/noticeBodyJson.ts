/**
 * A strict JSON (RFC 8259) parser that keeps integers beyond `Number.MAX_SAFE_INTEGER` as their exact digit
 * strings. `JSON.parse` rounds them (Shopify ids exceed 2^53) and a reviver only sees the rounded number on
 * Node 20, so the number tokens are read from the source text here.
 */
import * as Either from "effect/Either"

// Deep enough for any real notice, shallow enough that the recursion never reaches the stack limit.
const MAX_DEPTH = 256

const SAFE_INTEGER_DIGITS = String(Number.MAX_SAFE_INTEGER).length

/** Where and why a text is not JSON. */
export interface JsonSyntaxError {
  readonly position: number
  readonly reason: string
}

const ESCAPES: Readonly<Record<string, string>> = {
  "\"": "\"",
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t"
}

class Failure {
  constructor(readonly position: number, readonly reason: string) {}
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y
const HEX4 = /^[0-9a-fA-F]{4}$/

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

class Parser {
  position = 0
  constructor(readonly text: string) {}

  fail(reason: string): never {
    throw new Failure(this.position, reason)
  }

  skipWhitespace(): void {
    while (this.position < this.text.length && isWhitespace(this.text.charCodeAt(this.position))) this.position++
  }

  expect(literal: string, value: unknown): unknown {
    if (!this.text.startsWith(literal, this.position)) this.fail(`unexpected token, expected ${literal}`)
    this.position += literal.length
    return value
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail("nesting too deep")
    this.skipWhitespace()
    const c = this.text[this.position]
    switch (c) {
      case "{":
        return this.object(depth)
      case "[":
        return this.array(depth)
      case "\"":
        return this.string()
      case "t":
        return this.expect("true", true)
      case "f":
        return this.expect("false", false)
      case "n":
        return this.expect("null", null)
      case undefined:
        return this.fail("unexpected end of text")
      default:
        return this.number()
    }
  }

  number(): number | string {
    NUMBER.lastIndex = this.position
    const match = NUMBER.exec(this.text)
    if (match === null) return this.fail("unexpected character")
    const token = match[0]
    this.position += token.length
    const isInteger = match[1] === undefined && match[2] === undefined
    const digits = token.startsWith("-") ? token.length - 1 : token.length
    // Only integers past 2^53 lose precision in a way that matters for ids; fractions stay numbers.
    if (isInteger && digits >= SAFE_INTEGER_DIGITS && !Number.isSafeInteger(Number(token))) return token
    return Number(token)
  }

  string(): string {
    // The opening quote is at `position`.
    let result = ""
    let start = ++this.position
    for (;;) {
      if (this.position >= this.text.length) this.fail("unterminated string")
      const c = this.text.charCodeAt(this.position)
      if (c === 0x22) {
        result += this.text.slice(start, this.position)
        this.position++
        return result
      }
      if (c < 0x20) this.fail("control character in string")
      if (c === 0x5c) {
        result += this.text.slice(start, this.position)
        const e = this.text[this.position + 1]
        if (e === "u") {
          const hex = this.text.slice(this.position + 2, this.position + 6)
          if (!HEX4.test(hex)) this.fail("invalid unicode escape")
          result += String.fromCharCode(parseInt(hex, 16))
          this.position += 6
        } else {
          const escaped = e === undefined ? undefined : ESCAPES[e]
          if (escaped === undefined) this.fail("invalid escape")
          result += escaped
          this.position += 2
        }
        start = this.position
      } else {
        this.position++
      }
    }
  }

  array(depth: number): Array<unknown> {
    this.position++
    const items: Array<unknown> = []
    this.skipWhitespace()
    if (this.text[this.position] === "]") {
      this.position++
      return items
    }
    for (;;) {
      items.push(this.value(depth + 1))
      this.skipWhitespace()
      const c = this.text[this.position]
      this.position++
      if (c === "]") return items
      if (c !== ",") this.fail("expected , or ]")
    }
  }

  object(depth: number): Record<string, unknown> {
    this.position++
    // Entries then Object.fromEntries: a `__proto__` key becomes an own property, never the prototype.
    const entries: Array<[string, unknown]> = []
    this.skipWhitespace()
    if (this.text[this.position] === "}") {
      this.position++
      return {}
    }
    for (;;) {
      this.skipWhitespace()
      if (this.text[this.position] !== "\"") this.fail("expected a property name")
      const key = this.string()
      this.skipWhitespace()
      if (this.text[this.position] !== ":") this.fail("expected :")
      this.position++
      entries.push([key, this.value(depth + 1)])
      this.skipWhitespace()
      const c = this.text[this.position]
      this.position++
      if (c === "}") return Object.fromEntries(entries)
      if (c !== ",") this.fail("expected , or }")
    }
  }
}

/** Parses a whole JSON text; integers beyond 2^53 - 1 come back as their digit strings. */
export const parseJson = (text: string): Either.Either<unknown, JsonSyntaxError> => {
  const parser = new Parser(text)
  try {
    const value = parser.value(0)
    parser.skipWhitespace()
    if (parser.position !== text.length) parser.fail("unexpected text after the value")
    return Either.right(value)
  } catch (error) {
    if (error instanceof Failure) return Either.left({ position: error.position, reason: error.reason })
    throw error
  }
}
