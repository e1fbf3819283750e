/**
 * RFC (Registro Federal de Contribuyentes) validation and normalization.
 *
 * - Persona moral: 12 characters: 3 letters (Ñ and & allowed), date YYMMDD, 3-character homoclave.
 * - Persona física: 13 characters: 4 letters, date YYMMDD, 3-character homoclave.
 * The date part must be a calendar date (any century); the homoclave is letters or digits. The check digit is
 * not verified: published lists contain RFCs whose check digit does not follow the SAT algorithm.
 *
 * @since 0.1.0
 */

export type RfcKind = "moral" | "fisica"

const SHAPE = /^([A-ZÑ&]{3,4})(\d{2})(\d{2})(\d{2})([A-Z0-9]{3})$/

/** Upper-cases and removes spaces, hyphens and dots, the separators publishers put inside RFCs. */
export const normalizeRfc = (input: string): string => input.normalize("NFC").toUpperCase().replace(/[\s.\-_]/g, "")

const validDate = (yy: string, mm: string, dd: string): boolean => {
  const month = Number(mm)
  const day = Number(dd)
  if (month < 1 || month > 12 || day < 1) return false
  // Any century: 29 February is valid when either 19yy or 20yy is a leap year.
  const year = Number(yy)
  const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
  const days = [31, leap(1900 + year) || leap(2000 + year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
  return day <= (days[month - 1] ?? 0)
}

/** The kind of a normalized RFC, or undefined when it is not a well-formed RFC. */
export const rfcKind = (rfc: string): RfcKind | undefined => {
  const match = SHAPE.exec(rfc)
  if (match === null) return undefined
  const [, letters = "", yy = "", mm = "", dd = ""] = match
  if (!validDate(yy, mm, dd)) return undefined
  return letters.length === 3 ? "moral" : "fisica"
}

/** The normalized RFC when `input` is a well-formed RFC after normalization, else undefined. */
export const parseRfc = (input: string | null | undefined): string | undefined => {
  if (input === null || input === undefined) return undefined
  const normalized = normalizeRfc(input)
  return rfcKind(normalized) === undefined ? undefined : normalized
}

/** Generic RFCs SAT uses for the public at large and foreigners: not an identity. */
export const GENERIC_RFCS: ReadonlySet<string> = new Set(["XAXX010101000", "XEXX010101000"])
