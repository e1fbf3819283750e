/**
 * Small text helpers for matching Mexican names (states, municipalities,
 * companies, SCIAN titles). Pure functions.
 *
 * @since 0.1.0
 */
import * as EditDistance from "@service/core/EditDistance"

const COMBINING_MARKS = /\p{M}+/gu
const WHITESPACE = /\s+/gu

/**
 * Lower case, strip accents (NFD + remove combining marks), collapse runs of
 * whitespace (including NBSP) to a single space and trim.
 *
 * `foldText("  Ciudad de  MÉXICO ")` → `"ciudad de mexico"`;
 * `foldText("Año")` → `"ano"`.
 */
export const foldText = (s: string): string =>
  s.normalize("NFD").replace(COMBINING_MARKS, "").toLowerCase().replace(WHITESPACE, " ").trim()

/**
 * Folded text with every character that is not a letter or a digit turned into
 * a space (then collapsed). `"Q. Roo"` → `"q roo"`, `"Edo.-Méx."` → `"edo mex"`.
 */
export const foldWords = (s: string): string =>
  foldText(s).replace(/[^\p{L}\p{N}]+/gu, " ").trim()

/**
 * Folded text with everything but letters and digits removed: a key that
 * ignores accents, case, punctuation and spaces (`"D.F."` → `"df"`,
 * `"Nuevo León"` → `"nuevoleon"`, `"Q. Roo"` → `"qroo"`).
 */
export const compactKey = (s: string): string => foldText(s).replace(/[^\p{L}\p{N}]+/gu, "")

/**
 * Mexican legal-form suffixes, as token sequences after {@link normalizeName}'s
 * tokenisation (periods removed, runs of single letters merged: "S. A. de
 * C. V." → ["sa", "de", "cv"]). Longest first so the most specific one wins.
 */
const LEGAL_SUFFIXES: ReadonlyArray<ReadonlyArray<string>> = [
  ["sociedad", "anonima", "promotora", "de", "inversion", "de", "capital", "variable"],
  ["sociedad", "de", "responsabilidad", "limitada", "de", "capital", "variable"],
  ["sociedad", "anonima", "bursatil", "de", "capital", "variable"],
  ["sociedad", "anonima", "de", "capital", "variable"],
  ["sociedad", "de", "responsabilidad", "limitada"],
  ["s", "de", "rl", "de", "cv"],
  ["sde", "rl", "de", "cv"],
  ["s", "de", "rl", "cv"],
  ["s", "rl", "de", "cv"],
  ["s", "rl", "cv"],
  ["spr", "de", "rl", "de", "cv"],
  ["spr", "de", "rl"],
  ["sc", "de", "rl", "de", "cv"],
  ["sc", "de", "rl"],
  ["sapi", "de", "cv"],
  ["sab", "de", "cv"],
  ["sas", "de", "cv"],
  ["sa", "de", "cv"],
  ["s", "de", "rl"],
  ["sociedad", "anonima"],
  ["sociedad", "civil"],
  ["asociacion", "civil"],
  ["de", "cv"],
  ["sapi"],
  ["sab"],
  ["sas"],
  ["sa"],
  ["sc"],
  ["ac"]
]

const endsWith = (tokens: ReadonlyArray<string>, suffix: ReadonlyArray<string>): boolean =>
  suffix.length <= tokens.length &&
  suffix.every((token, i) => tokens[tokens.length - suffix.length + i] === token)

/** Merge runs of one-letter tokens: ["s", "a", "de", "c", "v"] → ["sa", "de", "cv"]. */
const mergeSingleLetters = (tokens: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  let run = ""
  for (const token of tokens) {
    if (token.length === 1 && /\p{L}/u.test(token)) {
      run += token
    } else {
      if (run !== "") out.push(run)
      run = ""
      out.push(token)
    }
  }
  if (run !== "") out.push(run)
  return out
}

/**
 * Name key for matching organisations across sources: folded, punctuation
 * dropped, Mexican legal-form suffixes dropped ("S.A. de C.V.",
 * "S.A.P.I. de C.V.", "S. de R.L. de C.V.", "S.C.", "A.C.", "S.A.B.", "S.A.",
 * also written without dots or spelled out). Suffixes are only removed at the
 * end, repeatedly, and never when nothing would be left.
 *
 * `normalizeName("Zapata Internacional, S.A. de C.V.")` and
 * `normalizeName("ZAPATA INTERNACIONAL SA DE CV")` are both
 * `"zapata internacional"`.
 */
export const normalizeName = (s: string): string => {
  const words = foldText(s)
    .replace(/\./gu, "")
    .replace(/&/gu, " ")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
  if (words === "") return ""
  const tokens = mergeSingleLetters(words.split(" "))
  let stripped = true
  while (stripped) {
    stripped = false
    for (const suffix of LEGAL_SUFFIXES) {
      if (suffix.length < tokens.length && endsWith(tokens, suffix)) {
        tokens.splice(tokens.length - suffix.length, suffix.length)
        stripped = true
        break
      }
    }
  }
  return tokens.join(" ")
}

/** Levenshtein edit distance (insert, delete, substitute; cost 1 each). */
export const editDistance = EditDistance.levenshtein

const trigrams = (s: string): Map<string, number> => {
  const padded = `  ${s} `
  const grams = new Map<string, number>()
  for (let i = 0; i + 3 <= padded.length; i++) {
    const gram = padded.slice(i, i + 3)
    grams.set(gram, (grams.get(gram) ?? 0) + 1)
  }
  return grams
}

/**
 * Trigram similarity (Dice coefficient over padded character trigrams, with
 * multiplicity) of the folded strings, in [0, 1]; 1 means equal after folding.
 */
export const trigramSimilarity = (a: string, b: string): number => {
  const fa = foldText(a)
  const fb = foldText(b)
  if (fa === fb) return 1
  if (fa === "" || fb === "") return 0
  const ga = trigrams(fa)
  const gb = trigrams(fb)
  let shared = 0
  let total = 0
  for (const count of ga.values()) total += count
  for (const count of gb.values()) total += count
  for (const [gram, count] of ga) shared += Math.min(count, gb.get(gram) ?? 0)
  return (2 * shared) / total
}

/**
 * Similarity in [0, 1] used to rank candidate names: the better of the
 * trigram similarity and the normalised edit-distance similarity of the
 * folded strings (edit distance catches short typos, trigrams catch word
 * reorderings and missing words).
 */
export const nameSimilarity = (a: string, b: string): number => {
  const fa = foldWords(a)
  const fb = foldWords(b)
  const longest = Math.max(fa.length, fb.length)
  if (longest === 0) return 0
  const edit = 1 - editDistance(fa, fb) / longest
  return Math.max(edit, trigramSimilarity(fa, fb))
}
