/**
 * Text rules of CloudEvents 1.0 attributes: string hygiene, RFC 3339 timestamps, media types, base64, and
 * the quoting of values in refusal details. Not API: `CloudEvent` is the public face.
 */

const MAX_QUOTED = 60

/** A value for a refusal detail: JSON-quoted (control characters escaped) and cut short. */
export const quote = (text: string): string =>
  JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text)

const hex = (codePoint: number): string => `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`

const isControl = (codePoint: number): boolean => codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f)

// U+FDD0..U+FDEF and the last two code points of every plane.
const isNoncharacter = (codePoint: number): boolean =>
  (codePoint >= 0xfdd0 && codePoint <= 0xfdef) || (codePoint & 0xfffe) === 0xfffe

const isSurrogate = (codePoint: number): boolean => codePoint >= 0xd800 && codePoint <= 0xdfff

/**
 * Why a string may not be a CloudEvents String (control character, noncharacter or unpaired surrogate), or
 * undefined when it may. Iterating by code point leaves an unpaired surrogate as a code point of its own.
 */
export const textProblem = (text: string): string | undefined => {
  let index = 0
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0
    if (isControl(codePoint)) return `contains the control character ${hex(codePoint)} at character ${index}`
    if (isSurrogate(codePoint)) return `contains an unpaired surrogate ${hex(codePoint)} at character ${index}`
    if (isNoncharacter(codePoint)) return `contains the noncharacter ${hex(codePoint)} at character ${index}`
    index += 1
  }
  return undefined
}

/** Length in characters (code points), as the limits of the spec count them. */
export const characterCount = (text: string): number => {
  let count = 0
  for (const _ of text) count += 1
  return count
}

// RFC 3339 section 5.6 date-time: full-date "T" full-time, the offset (Z or ±hh:mm) mandatory; "T" and "Z"
// may be lower case (the note in section 5.6).
const FULL_DATE = String.raw`(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})`
const PARTIAL_TIME = String.raw`(?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2})(?:\.\d+)?`
const TIME_OFFSET = String.raw`(?:[Zz]|[+-](?<offsetHour>\d{2}):(?<offsetMinute>\d{2}))`
const DATE_TIME = new RegExp(`^${FULL_DATE}[Tt]${PARTIAL_TIME}${TIME_OFFSET}$`)

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Whether `text` is an RFC 3339 date-time with an offset, every field in range (second 60: a leap second). */
export const isRfc3339DateTime = (text: string): boolean => {
  const groups = DATE_TIME.exec(text)?.groups
  if (groups === undefined) return false
  const field = (name: string): number => Number(groups[name] ?? "0")
  const month = field("month")
  const day = field("day")
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(field("year"), month) &&
    field("hour") <= 23 &&
    field("minute") <= 59 &&
    field("second") <= 60 &&
    field("offsetHour") <= 23 &&
    field("offsetMinute") <= 59
  )
}

// RFC 2045 / RFC 9110 token and quoted-string; parameters may be separated by optional whitespace.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"'
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`)

/** Whether `text` is a media type (RFC 2046) such as `application/json; charset=utf-8`. */
export const isMediaType = (text: string): boolean => MEDIA_TYPE.test(text)

/** Whether a media type is JSON (`*\/json` or `*\/*+json`, parameters ignored), so `data` holds JSON. */
export const isJsonMediaType = (text: string): boolean => {
  const essence = (text.split(";")[0] ?? "").trim().toLowerCase()
  const subtype = essence.slice(essence.indexOf("/") + 1)
  return essence.includes("/") && (subtype === "json" || subtype.endsWith("+json"))
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Whether `text` is standard padded base64 (CloudEvents Binary, `data_base64`). */
export const isBase64 = (text: string): boolean => BASE64.test(text)
