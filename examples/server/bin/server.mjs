#!/usr/bin/env node
// `npm start`: examples/server/src/main.ts from its bundle in build/runtimes (built by `npm install`, rebuilt here
// when a source changed; tsx if it cannot be built). An empty data folder is first seeded from build/demo-seed, so
// the demo corpus is published from the start. See scripts/runtimes.mjs and scripts/demo-seed.mjs.
import { plant } from "../../../scripts/demo-seed.mjs"
import { run } from "../../../scripts/runtimes.mjs"

const seeded = plant(process.env)
if (seeded !== undefined) console.log(`Seeded ${seeded} from build/demo-seed (migrations applied, demo corpus published)`)
await run("server")
