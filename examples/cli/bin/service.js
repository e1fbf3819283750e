#!/usr/bin/env node
// Runs the TypeScript sources directly, so a fresh clone needs no build step: tsx is registered as an ESM
// loader for this process (module.register, Node >= 20.6), then the entry point is imported through it.
import { register } from "tsx/esm/api"

register()
await import("../src/bin.ts")
