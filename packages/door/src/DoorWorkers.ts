/**
 * The door's background work: applying stored Arrivals to the CRM, claimed on the `WorkQueue` with a lease
 * (`SERVICE_ARRIVAL_LEASE`), so any number of worker processes share them; and the 30-day retention of raw
 * notices. Every host that runs workers runs it: the server's embedded worker and `npm run worker` processes.
 *
 * @since 0.1.0
 */
import * as Worker from "@service/core/Worker"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Intake, leaseConfig } from "./Intake.js"

/** @since 0.1.0 @category workers */
export const intake = Worker.make({
  name: "door.intake",
  description: "applies stored Arrivals to the CRM",
  unit: "Arrivals",
  lease: { variable: "SERVICE_ARRIVAL_LEASE", config: leaseConfig },
  poll: Worker.defaultQueuePoll,
  run: ({ name, poll, done }) => Effect.flatMap(Intake, (door) => door.process(name, { idle: poll, onRound: done }))
})

/**
 * Every worker runs it: the statement is idempotent, so several at once do no harm.
 *
 * @since 0.1.0 @category workers
 */
export const retention = Worker.make({
  name: "door.retention",
  description: "deletes raw notices and Source examples older than 30 days, hourly",
  unit: "notices",
  run: ({ done }) =>
    Effect.flatMap(Intake, (door) =>
      Effect.forever(Effect.flatMap(door.purgeExpired, (purged) => Effect.zipRight(done(purged), Effect.sleep(Duration.hours(1))))))
})

/** @since 0.1.0 @category workers */
export const workers = [intake, retention] as const
