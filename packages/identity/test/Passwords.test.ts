import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Passwords from "../src/Passwords.js"
import { freeFailures, lockSeconds } from "../src/People.js"

const secret = Redacted.make("correct horse battery staple")

describe("Passwords", () => {
  it.effect("a PHC scrypt string that records its cost; the password verifies, another does not", () =>
    Effect.gen(function*() {
      const passwords = Passwords.make({ logN: 10, r: 8, p: 1 })
      const hash = yield* passwords.hash(secret)
      assert.match(hash, /^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
      assert.notStrictEqual(yield* passwords.hash(secret), hash, "a new salt each time")
      assert.isTrue(yield* passwords.verify(secret, hash))
      assert.isFalse(yield* passwords.verify(Redacted.make("correct horse battery stapler"), hash))
    }))

  it.effect("a hash made at another cost still verifies (the stored parameters are used); a malformed or unbounded one never does", () =>
    Effect.gen(function*() {
      const older = yield* Passwords.make({ logN: 11, r: 8, p: 1 }).hash(secret)
      const current = Passwords.make({ logN: 10, r: 8, p: 1 })
      assert.isTrue(yield* current.verify(secret, older))
      assert.isFalse(yield* current.verify(secret, "plain text"))
      assert.isFalse(yield* current.verify(secret, older.replace("ln=11", "ln=30")), "a cost past the bound is refused, not run")
    }))

  it.effect("hashes wait their turn: with one at a time, a quick check started second ends after a slow one started first (issue 32 row 5)", () =>
    Effect.gen(function*() {
      const slowHash = yield* Passwords.make({ logN: 16, r: 8, p: 1 }).hash(secret)
      const quickHash = yield* Passwords.make({ logN: 10, r: 8, p: 1 }).hash(secret)
      const bounded = Passwords.make({ logN: 10, r: 8, p: 1 }, 1)
      const finished: Array<string> = []
      const check = (name: string, hash: string) => bounded.verify(secret, hash).pipe(Effect.tap(() => Effect.sync(() => finished.push(name))))
      const slow = yield* Effect.fork(check("slow", slowHash))
      // The slow check holds the one turn before the quick one asks for it.
      yield* Effect.yieldNow()
      const quick = yield* Effect.fork(check("quick", quickHash))
      assert.deepStrictEqual(yield* Effect.all([slow, quick].map((fiber) => fiber.await)).pipe(Effect.map((exits) => exits.map((exit) => exit._tag))), ["Success", "Success"])
      assert.deepStrictEqual(finished, ["slow", "quick"])
    }))

  it.effect("generated passwords are 24 characters of base64url, never the same", () =>
    Effect.gen(function*() {
      const passwords = Passwords.make({ logN: 10, r: 8, p: 1 })
      const a = Redacted.value(yield* passwords.generate)
      const b = Redacted.value(yield* passwords.generate)
      assert.match(a, /^[A-Za-z0-9_-]{24}$/)
      assert.notStrictEqual(a, b)
    }))
})

describe("sign-in backoff", () => {
  it("no wait for the first failures, then 30 s doubling to 15 minutes", () => {
    assert.deepStrictEqual(Array.from({ length: freeFailures }, (_, i) => lockSeconds(i)), [0, 0, 0, 0, 0])
    assert.deepStrictEqual([5, 6, 7, 8, 9, 10, 20].map(lockSeconds), [30, 60, 120, 240, 480, 900, 900])
  })
})
