#!/usr/bin/env node
// `npm run worker`: examples/server/src/worker-main.ts from its bundle in build/runtimes. See scripts/runtimes.mjs.
import { run } from "../../../scripts/runtimes.mjs"

await run("worker")
