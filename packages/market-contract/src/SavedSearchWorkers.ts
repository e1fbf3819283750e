/**
 * Saved searches' background work: comparing every saved search with each new serving publication, every
 * `SERVICE_SEARCH_ALERTS_EVERY` (default 1 minute), and recording each alert (`search.matched`) once, whichever
 * worker finds it.
 *
 * @since 0.1.0
 */
import * as Worker from "@service/core/Worker"
import * as Effect from "effect/Effect"
import { checkEveryConfig, SavedSearches } from "./SavedSearches.js"

/** @since 0.1.0 @category workers */
export const alerts = Worker.make({
  name: "saved_searches.alerts",
  description: "compares saved searches with each new publication and records search.matched once",
  unit: "alerts",
  run: ({ done }) =>
    Effect.gen(function*() {
      const searches = yield* SavedSearches
      const every = yield* Effect.orDie(checkEveryConfig)
      return yield* Effect.forever(
        Effect.zipRight(
          // A failed round (an outage) is logged and tried again next round: the comparison is idempotent.
          searches.check.pipe(
            Effect.flatMap(done),
            Effect.catchAllCause((cause) => Effect.logWarning("Saved searches could not be compared", cause))
          ),
          Effect.sleep(every)
        )
      )
    })
})

/** @since 0.1.0 @category workers */
export const workers = [alerts] as const
