/**
 * Password hashing with scrypt (`node:crypto`), a memory-hard function. Each hash is a PHC string that records its
 * parameters (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`), so the cost can rise later without breaking the hashes
 * already stored: a sign-in checks with the parameters of the stored hash. See docs/decisions/0067.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/**
 * The scrypt cost: N = 2^logN, block size r, parallelism p. The default is OWASP's recommendation for scrypt
 * (N = 2^17, r = 8, p = 1: 128 MiB and about a quarter of a second per hash on one core).
 *
 * @since 0.1.0 @category models
 */
export interface Cost {
  readonly logN: number
  readonly r: number
  readonly p: number
}

/** @since 0.1.0 @category constants */
export const defaultCost: Cost = { logN: 17, r: 8, p: 1 }

/** The shortest and longest password taken: long enough to resist guessing, short enough not to be a weapon. */
export const minLength = 12
/** @since 0.1.0 @category constants */
export const maxLength = 1024

const keyLength = 32
const saltLength = 16

/**
 * @since 0.1.0 @category tags
 */
export class Passwords extends Context.Tag("@service/identity/Passwords")<
  Passwords,
  {
    readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
    /** Whether `password` is the one `stored` hashes; false for a stored value it cannot read. */
    readonly verify: (password: Redacted.Redacted<string>, stored: string) => Effect.Effect<boolean>
    /** Spends what a verification spends, for a sign-in with an unknown address (no timing tells it apart). */
    readonly waste: (password: Redacted.Redacted<string>) => Effect.Effect<void>
    /** A new random password (24 characters, 144 bits). */
    readonly generate: Effect.Effect<Redacted.Redacted<string>>
  }
>() {}

const deriveNow = (password: string, salt: Buffer, cost: Cost) =>
  Effect.async<Buffer>((resume) => {
    const N = 2 ** cost.logN
    // scrypt needs 128 * N * r bytes; Node refuses past maxmem, so it is given that with room to spare.
    scrypt(password, salt, keyLength, { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r }, (error, key) => {
      if (error !== null) resume(Effect.die(error))
      else resume(Effect.succeed(key))
    })
  })

const phc = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

/**
 * `concurrency`: how many hashes run at once on this node (default 1). Each takes a core for about a quarter of a
 * second, so a burst of sign-ins waits its turn instead of taking every core from the requests around it (issue 32
 * row 5).
 *
 * @since 0.1.0 @category constructors
 */
export const make = (cost: Cost, concurrency = 1) => {
  const turns = Effect.unsafeMakeSemaphore(concurrency)
  const derive = (password: string, salt: Buffer, cost: Cost) => turns.withPermits(1)(deriveNow(password, salt, cost))
  const hash = (password: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const salt = randomBytes(saltLength)
      const key = yield* derive(Redacted.value(password), salt, cost)
      return `$scrypt$ln=${cost.logN},r=${cost.r},p=${cost.p}$${salt.toString("base64").replace(/=+$/, "")}$${
        key.toString("base64").replace(/=+$/, "")
      }`
    }).pipe(Effect.withSpan("Passwords.hash", { captureStackTrace: false }))

  const verify = (password: Redacted.Redacted<string>, stored: string) =>
    Effect.gen(function*() {
      const parts = phc.exec(stored)
      if (parts === null) return false
      const [, logN, r, p, salt, expected] = parts
      const storedCost = { logN: Number(logN), r: Number(r), p: Number(p) }
      // A stored hash is ours, but its parameters are bounded all the same.
      if (storedCost.logN > 20 || storedCost.r > 16 || storedCost.p > 4) return false
      const want = Buffer.from(expected ?? "", "base64")
      const key = yield* derive(Redacted.value(password), Buffer.from(salt ?? "", "base64"), storedCost)
      return want.length === key.length && timingSafeEqual(want, key)
    }).pipe(Effect.withSpan("Passwords.verify", { captureStackTrace: false }))

  const waste = (password: Redacted.Redacted<string>) => Effect.asVoid(derive(Redacted.value(password), randomBytes(saltLength), cost))

  const generate = Effect.sync(() => Redacted.make(randomBytes(18).toString("base64url")))

  return Passwords.of({ hash, verify, waste, generate })
}

/**
 * The cost from `SERVICE_PASSWORD_SCRYPT_LOG_N` (default 17); r = 8 and p = 1; at most
 * `SERVICE_PASSWORD_HASH_CONCURRENCY` hashes at once (default 1).
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Passwords, never> = Layer.effect(
  Passwords,
  Effect.map(
    Config.all([
      Config.integer("SERVICE_PASSWORD_SCRYPT_LOG_N").pipe(
        Config.withDefault(defaultCost.logN),
        Config.validate({ message: "SERVICE_PASSWORD_SCRYPT_LOG_N must be between 14 and 20", validation: (n) => n >= 14 && n <= 20 })
      ),
      Config.integer("SERVICE_PASSWORD_HASH_CONCURRENCY").pipe(
        Config.withDefault(1),
        Config.validate({ message: "SERVICE_PASSWORD_HASH_CONCURRENCY must be between 1 and 16", validation: (n) => n >= 1 && n <= 16 }),
        Config.withDescription("Password hashes run at once on a node; the rest wait their turn.")
      )
    ]),
    ([logN, concurrency]) => make({ ...defaultCost, logN }, concurrency)
  ).pipe(Effect.orDie)
)

/**
 * A cheap cost (N = 2^10) for tests, which hash many passwords on a busy machine; the stored hash says so.
 *
 * @since 0.1.0 @category layers
 */
export const layerTest: Layer.Layer<Passwords> = Layer.succeed(Passwords, make({ logN: 10, r: 8, p: 1 }))
