/**
 * Dates as publishers write them, turned into ISO `YYYY-MM-DD` strings: day-first numeric dates (SAT, SFP),
 * spelled-out Spanish dates (SAT oficios, CRE sheet titles) and ISO or `DD/MM/YYYY` cells (CompraNet, OCDS).
 * Impossible calendar dates give nothing.
 */
import { foldText } from "../Text.js"

const MONTHS: ReadonlyMap<string, number> = new Map([
  ["enero", 1], ["ene", 1], ["jan", 1],
  ["febrero", 2], ["feb", 2],
  ["marzo", 3], ["mar", 3],
  ["abril", 4], ["abr", 4], ["apr", 4],
  ["mayo", 5], ["may", 5],
  ["junio", 6], ["jun", 6],
  ["julio", 7], ["jul", 7],
  ["agosto", 8], ["ago", 8], ["aug", 8],
  ["septiembre", 9], ["setiembre", 9], ["sep", 9], ["sept", 9],
  ["octubre", 10], ["oct", 10],
  ["noviembre", 11], ["nov", 11],
  ["diciembre", 12], ["dic", 12], ["dec", 12]
])

/** `YYYY-MM-DD` when the parts form a calendar date. */
export const isoDate = (year: number, month: number, day: number): string | undefined => {
  if (!Number.isInteger(year) || month < 1 || month > 12 || day < 1) return undefined
  const date = new Date(Date.UTC(year, month - 1, day))
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`
}

// Two-digit years only occur in re-publication notes ("14-08-19 // 20/09/2018"); the lists start in 2004.
const fullYear = (digits: string): number => (digits.length === 2 ? 2000 + Number(digits) : Number(digits))

const monthOf = (token: string): number | undefined => (/^\d+$/.test(token) ? Number(token) : MONTHS.get(token))

const DAY_FIRST = /(?<![\d/-])(\d{1,2})[/-](\d{1,2}|[a-z]{3,10})[/-](\d{4}|\d{2})(?![\d/-])/gu

/**
 * Every day-first date in a cell, in order, as ISO dates: `dd/mm/yyyy` (SAT and SFP), `dd-mm-yy`, `dd/mm/yy` and
 * `dd/Mon/yyyy` ("30/Jun/2006"). A stage published twice is written "28/01/2019 - 16/07/2017".
 */
export const parseDayFirstDates = (text: string): ReadonlyArray<string> =>
  Array.from(foldText(text).matchAll(DAY_FIRST)).flatMap(([, day = "", month = "", year = ""]) => {
    const m = monthOf(month)
    const iso = m === undefined ? undefined : isoDate(fullYear(year), m, Number(day))
    return iso === undefined ? [] : [iso]
  })

const SPELLED = /(?<![\d-])(\d{1,2})\s+(?:de\s+)?([a-z]+)\s+(?:del?\s+)?(\d{4})(?!\d)/gu

/**
 * Every spelled-out date in a text ("… de fecha 16 de diciembre de 2016", "18 de junio del 2018",
 * "16 junio 2017"), in order, as ISO dates. Used on the "Número y fecha de oficio" columns and the preamble.
 */
export const parseSpelledDates = (text: string): ReadonlyArray<string> =>
  Array.from(foldText(text).matchAll(SPELLED)).flatMap(([, day = "", month = "", year = ""]) => {
    const m = MONTHS.get(month)
    const iso = m === undefined ? undefined : isoDate(Number(year), m, Number(day))
    return iso === undefined ? [] : [iso]
  })


/**
 * The calendar date a value is written with, as `YYYY-MM-DD`: ISO dates with any time part
 * (`2012-10-30 19:24`, `2013-11-27 00:00:00 GMT`, `2015-12-22T00:00:00-06:00`) keep their written date (no time
 * zone conversion: publishers write date-only values as midnight in various zones), `DD/MM/YYYY` is accepted;
 * anything else (or an impossible date) is null.
 */
export const isoDateOf = (text: string | null | undefined): string | null => {
  if (text === null || text === undefined) return null
  const trimmed = text.trim()
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:$|[ T])/u.exec(trimmed)
  const dmy = iso === null ? /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/u.exec(trimmed) : null
  const [year, month, day] = iso !== null
    ? [iso[1], iso[2], iso[3]]
    : dmy !== null
    ? [dmy[3], dmy[2], dmy[1]]
    : [undefined, undefined, undefined]
  if (year === undefined || month === undefined || day === undefined) return null
  return isoDate(Number(year), Number(month), Number(day)) ?? null
}
