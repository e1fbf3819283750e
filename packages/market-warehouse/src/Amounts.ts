/**
 * Amounts as exact decimal strings and currencies as ISO 4217 codes. Money is never a float in storage: a
 * value published as a JSON number or as binary-float text (CRE's "6.4080000000000004") is turned into the
 * shortest decimal that reads back as the same number, which is what the publisher typed.
 *
 * @since 0.1.0
 */

/** Normalizes a decimal written with optional thousands separators (`1,234,567.50`, `$ 1 234.5`). */
export const parseDecimal = (input: string | number | null | undefined): string | undefined => {
  if (input === null || input === undefined) return undefined
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return undefined
    return shortestDecimal(input)
  }
  const cleaned = input.trim().replace(/^\$\s*/, "").replace(/[\s,]/g, "")
  // Spreadsheet exports write small values in exponent form ("1.77E-2").
  if (/^-?\d+(\.\d+)?[eE][-+]?\d+$/.test(cleaned)) return shortestDecimal(Number(cleaned))
  if (!/^-?\d+(\.\d+)?$/.test(cleaned)) return undefined
  // Binary-float artefacts (more than 15 significant digits) are rounded to what the publisher typed.
  const digits = cleaned.replace(/^-/, "").replace(".", "").replace(/^0+/, "")
  if (digits.length > 15 && cleaned.includes(".")) return shortestDecimal(Number(cleaned))
  return stripZeros(cleaned)
}

const stripZeros = (decimal: string): string => {
  let out = decimal
  if (out.includes(".")) out = out.replace(/0+$/, "").replace(/\.$/, "")
  out = out.replace(/^(-?)0+(?=\d)/, "$1")
  return out === "-0" ? "0" : out
}

/** The shortest round-trip decimal of a float, without exponent notation. */
export const shortestDecimal = (value: number): string => {
  const text = String(Number(value.toPrecision(15)))
  if (!/e/i.test(text)) return stripZeros(text)
  const rounded = Number(text)
  return Number.isInteger(rounded) ? BigInt(rounded).toString() : stripZeros(rounded.toFixed(20))
}

/** Non-ISO currency spellings seen in Mexican publications, mapped to their ISO code. */
const CURRENCY_ALIASES: Readonly<Record<string, string>> = {
  MNX: "MXN",
  MN: "MXN",
  "M.N.": "MXN",
  PESOS: "MXN",
  PESO: "MXN",
  "PESO MEXICANO": "MXN",
  DLLS: "USD",
  DOLARES: "USD",
  "DÓLARES": "USD",
  "DOLAR AMERICANO": "USD",
  EUROS: "EUR",
  EURO: "EUR"
}

const ISO = /^[A-Z]{3}$/

/**
 * The ISO code of a published currency: `{ code, reported }` where `reported` is the original text when it
 * had to be mapped (so loaders can report `MNX` loaded as MXN), or undefined when not recognized.
 */
export const parseCurrency = (
  input: string | null | undefined
): { readonly code: string; readonly reported: string | null } | undefined => {
  if (input === null || input === undefined) return undefined
  const text = input.trim().toUpperCase()
  if (text === "") return undefined
  const alias = CURRENCY_ALIASES[text]
  if (alias !== undefined) return { code: alias, reported: input.trim() }
  return ISO.test(text) ? { code: text, reported: text === input.trim() ? null : input.trim() } : undefined
}
