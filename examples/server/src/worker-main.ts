/**
 * `npm run worker`: runs the application's workers (applying door Arrivals, sending deliveries, comparing saved
 * searches, finishing contact unlocks) against the PostgreSQL at `DATABASE_URL`, next to API nodes started with
 * `SERVICE_EMBEDDED_WORKER=false` (`@service/server/Workers`). SIGTERM or SIGINT stops it cleanly.
 */
import * as App from "@service/app/App"
import * as WorkerMain from "@service/server/WorkerMain"

WorkerMain.runMain(WorkerMain.make(App.app))
