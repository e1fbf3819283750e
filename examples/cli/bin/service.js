#!/usr/bin/env node
// The `service` binary: examples/cli/src/bin.ts from its bundle in build/runtimes (built by `npm install`, rebuilt
// here when a source changed; tsx if it cannot be built). See scripts/runtimes.mjs.
import { run } from "../../../scripts/runtimes.mjs"

await run("cli")
