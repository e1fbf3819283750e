/**
 * `npm start`: the node HTTP host (`@service/server`) serving the application of every bundle (`App.app`) on
 * embedded PGlite (or PostgreSQL with DATABASE_URL), with the demo workspace bootstrapped and the demo corpus
 * loaded on first start. It listens before it loads the application, so GET /health answers at once.
 */
import * as Main from "@service/server/Main"

Main.runMain(Main.make(() => import("@service/app/App").then((module) => module.app)))
