// A module-resolution hook (node:module `register`) that turns on the `@service/source` export condition, so the
// workspace packages resolve to their TypeScript sources instead of their built `dist/` (what a host installs).
// `node --conditions=@service/source` does the same for a whole process; this is for a process already running.
export const resolve = (specifier, context, nextResolve) =>
  nextResolve(specifier, context.conditions.includes("@service/source")
    ? context
    : { ...context, conditions: [...context.conditions, "@service/source"] })
