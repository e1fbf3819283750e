/**
 * Which of many forbidden strings occur in which texts, in one pass over each text (Aho-Corasick over UTF-16 code
 * units). Tests scan every response they saw for thousands of values (source identities, publishers, contact
 * coordinates: `ProjectionAudit.forbiddenValues`); one `includes` per value and response cost tens of seconds a
 * file. An operator can scan logs the same way.
 *
 * @since 0.1.0
 */

interface Automaton {
  readonly next: ReadonlyArray<Map<number, number>>
  readonly fail: ReadonlyArray<number>
  /** The needles (by index) that end at each state, its fail chain's included. */
  readonly out: ReadonlyArray<ReadonlyArray<number>>
}

const build = (needles: ReadonlyArray<string>): Automaton => {
  const next: Array<Map<number, number>> = [new Map()]
  const own: Array<Array<number>> = [[]]
  needles.forEach((needle, index) => {
    if (needle.length === 0) return
    let state = 0
    for (let i = 0; i < needle.length; i++) {
      const unit = needle.charCodeAt(i)
      const found = next[state]?.get(unit)
      if (found !== undefined) {
        state = found
        continue
      }
      next.push(new Map())
      own.push([])
      next[state]?.set(unit, next.length - 1)
      state = next.length - 1
    }
    own[state]?.push(index)
  })
  // Breadth first: a state's fail link is the longest proper suffix of its path that is also a path.
  const fail: Array<number> = new Array<number>(next.length).fill(0)
  const out: Array<ReadonlyArray<number>> = own.map((list) => list)
  const queue: Array<number> = [...(next[0]?.values() ?? [])]
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head] ?? 0
    for (const [unit, child] of next[state] ?? new Map<number, number>()) {
      let f = fail[state] ?? 0
      while (f !== 0 && !(next[f]?.has(unit) ?? false)) f = fail[f] ?? 0
      const target = next[f]?.get(unit)
      fail[child] = target !== undefined && target !== child ? target : 0
      out[child] = [...(own[child] ?? []), ...(out[fail[child] ?? 0] ?? [])]
      queue.push(child)
    }
  }
  return { next, fail, out }
}

// Tests scan body after body for the same list: its automaton is built once.
const built = new WeakMap<ReadonlyArray<string>, Automaton>()
const automatonOf = (needles: ReadonlyArray<string>): Automaton => {
  const cached = built.get(needles)
  if (cached !== undefined) return cached
  const automaton = build(needles)
  built.set(needles, automaton)
  return automaton
}

const isDigits = (text: string): boolean => /^[0-9]+$/.test(text)
const isWordUnit = (unit: number | undefined): boolean =>
  unit !== undefined && ((unit >= 48 && unit <= 57) || (unit >= 65 && unit <= 90) || (unit >= 97 && unit <= 122))

/**
 * For each haystack, the needles it contains (each once, in needle order). Empty needles match nothing.
 *
 * A needle made only of digits (a registry number, a source record id) counts only as a whole token, with no letter
 * or digit on either side: a random run of digits inside a sealed ref, a fingerprint or a request id is not that
 * identity, and matching it there made scans fail at random.
 *
 * @since 0.1.0 @category scanning
 */
export const find = (haystacks: ReadonlyArray<string>, needles: ReadonlyArray<string>): ReadonlyArray<ReadonlyArray<string>> => {
  const { fail, next, out } = automatonOf(needles)
  return haystacks.map((haystack) => {
    const seen = new Set<number>()
    let state = 0
    for (let i = 0; i < haystack.length; i++) {
      const unit = haystack.charCodeAt(i)
      while (state !== 0 && !(next[state]?.has(unit) ?? false)) state = fail[state] ?? 0
      state = next[state]?.get(unit) ?? 0
      for (const index of out[state] ?? []) {
        if (seen.has(index)) continue
        const needle = needles[index] ?? ""
        if (isDigits(needle)) {
          const before = i - needle.length
          if (isWordUnit(before >= 0 ? haystack.charCodeAt(before) : undefined)) continue
          if (isWordUnit(i + 1 < haystack.length ? haystack.charCodeAt(i + 1) : undefined)) continue
        }
        seen.add(index)
      }
    }
    return [...seen].sort((a, b) => a - b).flatMap((index) => {
      const needle = needles[index]
      return needle === undefined ? [] : [needle]
    })
  })
}
