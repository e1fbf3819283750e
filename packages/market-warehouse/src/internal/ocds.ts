/**
 * Open Contracting Data Standard (OCDS) publications of Mexican buyers as a {@link SourceParser}: federal
 * Contrataciones Abiertas (APF) compiled records, INAI releases, CDMX-SEFIN records and releases, GACM (NAICM
 * airport) records and releases, and Jalisco record packages and release packages, e.g.
 * `data/mx/procurement/ocds_gacm_naicm_releases_sample.json`.
 *
 * Each file is a JSON array read as a stream (stream-json `parser()` + `StreamArray`, never a whole-file read);
 * each top-level element is one data row, its `line` the element's 1-based position in the array (the files put
 * one element per line after the opening bracket, so element n is physical line n + 1). An element is a release
 * (has `ocid`), a record (`compiledRelease`, else its latest embedded release by date; a record whose releases
 * are only links and that has no compiledRelease is rejected), a record package (`records[]`) or a release
 * package (`releases[]`). The JSON is `unknown` and decoded with permissive Effect Schema structs: every field
 * this parser reads is optional and checked where it is used, so a malformed part (e.g. a value that is not an
 * amount) is ignored without rejecting the rest. Several releases of one ocid are each emitted; the loader
 * upserts, so the later ones override. A release without a tender (Jalisco's contract-stage release) emits no
 * opportunity and fills its awards' buyer, procedure type, contracting type and partidas from the earlier
 * releases of the same ocid in the file, so the later award does not override them with nulls.
 *
 * Publisher (one source per publisher): from the first element's publisher / packageInfo.publisher name, uid and
 * uri and the ocid prefixes (ocds-07smqs APF, ocds-87sd3t CDMX, ocds-xs1qbl Jalisco; INAI and GACM by name),
 * else from the file name; a file naming none of the five fails.
 *
 * Per release:
 * - `Opportunity` (when the release has a tender object; `sourceRecordId` = ocid): title = tender title, else
 *   tender description, award or contract title, budget or COG partida description, else the ocid; buyer from
 *   `buyer` / the parties (legal name; an "ACRONYM | Name" name is split; a short all-capital name beside a
 *   different legal name, or an all-letter identifier such as GACM, is the acronym); procedure type from
 *   procurementMethodDetails, else procurementMethodRationale, when they name a procedure (see
 *   {@link procedureTypeFromText}), else the procurementMethod code (open → licitacion_publica, selective →
 *   invitacion_tres, limited / direct → adjudicacion_directa); contracting type from mainProcurementCategory
 *   (null when not published — never guessed from items); statusText = tender.status as published.
 * - Actionability at load time ({@link ocdsActionability}), from tender.status, the awards and the tender period
 *   against the load date (the Effect `Clock`): cancelled status → cancelled; any award (or signed contract)
 *   to a supplier → awarded; unsuccessful or complete without award → closed; tender period ended before the
 *   load date → closed; active with the load date inside the tender period → open_at_load (the only case with
 *   isOpen true); not started yet, planned, or active without a period end → unknown. All the sample data is
 *   historical; the reason states the status and dates in words.
 * - `Award` per award (status not cancelled / unsuccessful; CDMX's "pending" awards with active contracts are
 *   kept) and supplier, plus per supplier of a non-cancelled contract not
 *   linked to an award of the release (APF publishes contracts only); `sourceRecordId` =
 *   `<ocid>/<award id>/<supplier key>`, supplier key = RFC when known, else the published supplier id, else the
 *   normalized name. Amount rule (never summed across currencies or scopes):
 *   1. contract values matched to the supplier (contracts of the award whose `suppliers` name the supplier, or all
 *      the award's contracts when the award has one supplier and the contracts list none; `value`, else
 *      `valueWithTax`) → `supplier_contract`, summed exactly when several contracts share one currency;
 *   2. else the award value: `supplier_contract` when the award has one supplier (the whole award is that
 *      supplier's), `award_group_published_total` when it lists several (the same group total on each supplier's
 *      row, which is why it is a separate scope);
 *   3. a contract without an award: its value, `supplier_contract` with one supplier, else group total;
 *   4. nothing usable → amount and currency null (scope `supplier_contract`).
 *   Currency through {@link parseCurrency} (GACM's "MNX" → MXN with `currencyReported` "MNX"). Award date =
 *   award.date, else the earliest dateSigned of the matched contracts (calendar date as written).
 * - `cogPartidas` (five-digit COG partidas específicas only): items classified with scheme CUCoP whose id has five
 *   digits (INAI), planning.budget.objeto_del_gasto (INAI), and budget breakdown classifications "Economic" with
 *   a 5-digit id (APF). An 8-digit CUCoP item id gives none: the CUCoP catalog
 *   (`data/mx/catalogs/cucop_cog_catalogo_edca.csv` in the shared set) numbers items as the 4-digit partida
 *   genérica + a 4-digit sequence (2110 → 21100001 … 21100282, 2530 → 25300002 … 25303455), so their first five
 *   digits are not a partida específica (10,565 of its 11,547 items start with five digits that are none).
 *   GACM's 4-digit partidas genéricas (whose description is stored in `scheme`) and Jalisco's FAM-GOB-JAL
 *   family codes are not partidas específicas either: no fifth digit is invented. An award takes its own items'
 *   and matched contracts' partidas, else the procedure's; the opportunity takes all of the release's.
 * - Supplier RFC: the identifier id (or the party/reference id) when it parses as an RFC after removing an
 *   "RFC-" prefix and HTML entities ("H&#38;L001219R14" → H&L001219R14) — scheme "RFC" / "MX-RFC" or a bare
 *   id; hashes, registry ids (Jalisco P00268), CURPs, "0", "NO APLICA" and several RFCs joined by "/" (a joint
 *   bid) are not one RFC. An RFC equal to the buyer's own (buyer parties, transaction payer/provider) is a
 *   publisher error (GACM prints its own RFC for one supplier) and is dropped; then, and whenever the identifier
 *   gives no RFC, the RFC of a contract transaction's payee / receiverOrganization whose name matches the
 *   supplier's (after {@link normalizeName}) is used — that is how GTA140724H10 (Global Tourist Agency) is
 *   found. Generic RFCs (XAXX010101000) are never an identity.
 * - `SupplierObservation` per supplier party: parties with a supplier role ("supplier", "Proveedor o
 *   contratista"), plus any organization named as a supplier of an award or contract that is loaded (INAI lists
 *   one awarded bidder only as "Participante"; CDMX 2015 and GACM embed suppliers in awards without parties).
 *   Tenderers that were not awarded are not observations. `sourceRecordId` = `<ocid>/<supplier key>`; name as
 *   published, extended when another entry for the same organization carries a longer name that starts with it
 *   (CDMX truncates names to ~32 characters: "TIENDAS COMERCIAL MEXICANA S.A D" → "… S.A DE C"); state from
 *   address.region when it resolves ("DF" → 09, "DISTRITO FEDERAL" → 09, "Jalisco" → 14); contact point
 *   telephone / email / url kept in `contact` (stored, never served), placeholders such as
 *   "noproporcionado@noproporcionado.com" not counted as presence.
 * - An element is rejected (with its reason) when it is not an OCDS release, record or package, when it yields
 *   no tender, award or supplier, or when a mapped record fails its schema.
 */
import { Clock, Effect, Either, HashMap, Option, ParseResult, Schema, Stream } from "effect"
import { createReadStream } from "node:fs"
import { basename } from "node:path"
import { pipeline } from "node:stream"
import StreamJson from "stream-json"
import StreamArray from "stream-json/streamers/StreamArray.js"
import { SourceDefinition } from "../Corpus.js"
import { parseCurrency, parseDecimal } from "../Amounts.js"
import { contractingTypeFromText, procedureTypeFromText } from "./compranet.js"
import { isoDateOf } from "./dates.js"
import type { ProcedureType } from "./compranet.js"
import { SourceFileError } from "./csv.js"
import { isPresent } from "./denue.js"
import type { SourceParser } from "./parser.js"
import { AwardRecord, OpportunityRecord, SupplierObservationRecord } from "./records.js"
import type { LoadItem } from "./records.js"
import { GENERIC_RFCS, parseRfc } from "../Rfc.js"
import { resolveState } from "../States.js"
import { foldText, foldWords, normalizeName } from "../Text.js"

// ---------------------------------------------------------------------------
// Sources

const OCDS_LICENCE = "BSD-3-Clause sample-data repository (open-contracting/sample-data); " +
  "publisher open data, Términos de Libre Uso MX (datos.gob.mx)"

export const ocdsApfSource = new SourceDefinition({
  slug: "ocds_apf",
  label: "Contrataciones Abiertas de la APF (OCDS)",
  publisher: "Secretaría de la Función Pública / Secretaría de Hacienda y Crédito Público (Contrataciones Abiertas)",
  licence: OCDS_LICENCE,
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

export const ocdsInaiSource = new SourceDefinition({
  slug: "ocds_inai",
  label: "INAI contrataciones abiertas (OCDS)",
  publisher: "Instituto Nacional de Transparencia, Acceso a la Información y Protección de Datos Personales (INAI)",
  licence: OCDS_LICENCE,
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

export const ocdsCdmxSource = new SourceDefinition({
  slug: "ocds_cdmx",
  label: "Contratos Abiertos de la Ciudad de México (OCDS)",
  publisher: "Gobierno de la Ciudad de México, Secretaría de Finanzas (CDMX-SEFIN)",
  licence: OCDS_LICENCE,
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

export const ocdsGacmSource = new SourceDefinition({
  slug: "ocds_gacm",
  label: "Contrataciones abiertas del Nuevo Aeropuerto Internacional de la Ciudad de México (OCDS)",
  publisher: "Grupo Aeroportuario de la Ciudad de México (GACM)",
  licence: OCDS_LICENCE,
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

export const ocdsJaliscoSource = new SourceDefinition({
  slug: "ocds_jalisco",
  label: "Contrataciones Abiertas del Estado de Jalisco (OCDS)",
  publisher: "Gobierno del Estado de Jalisco, Secretaría de Planeación, Administración y Finanzas",
  licence: `${OCDS_LICENCE}; the packages carry "license": null`,
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

export const ocdsSources: ReadonlyArray<SourceDefinition> = [
  ocdsApfSource,
  ocdsInaiSource,
  ocdsCdmxSource,
  ocdsGacmSource,
  ocdsJaliscoSource
]

// ---------------------------------------------------------------------------
// Streaming the top-level array

const ArrayEntry = Schema.Struct({ key: Schema.Number, value: Schema.Unknown })
const decodeArrayEntry = Schema.decodeUnknownEither(ArrayEntry)

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))

export interface JsonElement {
  /** 1-based position in the top-level array. */
  readonly index: number
  readonly value: unknown
}

/**
 * The elements of the top-level JSON array of `path`, one at a time (stream-json assembles each element; the
 * file is never read whole). Fails with {@link SourceFileError} when the file cannot be read, is not valid JSON
 * or its top level is not an array.
 */
export const jsonArrayElements = (path: string): Stream.Stream<JsonElement, SourceFileError> =>
  Stream.acquireRelease(
    Effect.sync(() => {
      const source = createReadStream(path)
      const tokens = StreamJson.parser()
      const elements = StreamArray.streamArray()
      // pipeline destroys every stage with the first error (ENOENT, syntax error), which the iterator then throws.
      pipeline(source, tokens, elements, () => undefined)
      return { source, tokens, elements }
    }),
    ({ elements, source, tokens }) =>
      Effect.sync(() => {
        elements.destroy()
        tokens.destroy()
        source.destroy()
      })
  ).pipe(
    Stream.flatMap(({ elements }) =>
      Stream.fromAsyncIterable<unknown, SourceFileError>(
        elements,
        (e) => new SourceFileError({ path, message: errorMessage(e) })
      )
    ),
    Stream.mapEffect((entry) =>
      Either.match(decodeArrayEntry(entry), {
        onLeft: (error) =>
          Effect.fail(
            new SourceFileError({
              path,
              message: `unexpected stream-json output: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
            })
          ),
        onRight: ({ key, value }) => Effect.succeed<JsonElement>({ index: key + 1, value })
      })
    )
  )

// ---------------------------------------------------------------------------
// Permissive OCDS schemas: every field optional and unknown, decoded where it is read.

const U = Schema.optional(Schema.Unknown)
const Text = Schema.Union(Schema.String, Schema.Number)
const UnknownArray = Schema.Array(Schema.Unknown)

const ValueS = Schema.Struct({ amount: U, currency: U })
const PeriodS = Schema.Struct({ startDate: U, endDate: U })
const IdentifierS = Schema.Struct({ id: U, scheme: U, legalName: U })
const AddressS = Schema.Struct({ region: U, locality: U, countryName: U })
const ContactPointS = Schema.Struct({ telephone: U, email: U, url: U })
const OrganizationS = Schema.Struct({
  id: U,
  name: U,
  legalName: U,
  identifier: U,
  address: U,
  contactPoint: U,
  roles: U
})
const ClassificationS = Schema.Struct({ id: U, scheme: U, description: U })
const ItemS = Schema.Struct({ classification: U, additionalClassifications: U })
const BudgetClassificationS = Schema.Struct({ id: U, classification: U, classifications: U, description: U })
const BudgetBreakdownS = Schema.Struct({ budgetClassification: U, budgetclassifications: U, description: U })
const BudgetS = Schema.Struct({ objeto_del_gasto: U, budgetBreakdown: U, description: U, project: U })
const PlanningS = Schema.Struct({ budget: U })
const TransactionS = Schema.Struct({ providerOrganization: U, receiverOrganization: U, payer: U, payee: U })
const ImplementationS = Schema.Struct({ transactions: U, budgetBreakdown: U })
const AwardS = Schema.Struct({
  id: U,
  title: U,
  description: U,
  status: U,
  date: U,
  value: U,
  suppliers: U,
  items: U
})
const ContractS = Schema.Struct({
  id: U,
  awardID: U,
  title: U,
  description: U,
  status: U,
  dateSigned: U,
  value: U,
  valueWithTax: U,
  suppliers: U,
  buyers: U,
  items: U,
  implementation: U
})
const TenderS = Schema.Struct({
  id: U,
  title: U,
  description: U,
  status: U,
  procurementMethod: U,
  procurementMethodDetails: U,
  procurementMethodRationale: U,
  mainProcurementCategory: U,
  tenderPeriod: U,
  datePublished: U,
  value: U,
  items: U,
  tenderers: U
})
/** A release: the only required field is the ocid. */
const ReleaseS = Schema.Struct({
  ocid: Text,
  id: U,
  date: U,
  tag: U,
  buyer: U,
  parties: U,
  planning: U,
  tender: U,
  awards: U,
  contracts: U
})
const ElementS = Schema.Struct({ ocid: U, records: U, releases: U, compiledRelease: U, publisher: U, packageInfo: U })
const PublisherS = Schema.Struct({ name: U, uid: U, uri: U, scheme: U })
const PackageInfoS = Schema.Struct({ publisher: U })

type Organization = typeof OrganizationS.Type
type Award = typeof AwardS.Type
type Contract = typeof ContractS.Type
type Tender = typeof TenderS.Type
type Release = typeof ReleaseS.Type

const decodeAs = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownOption(schema)
  return (u: unknown): A | undefined => Option.getOrUndefined(decode(u))
}
const listAs = <A, I>(schema: Schema.Schema<A, I>) => {
  const item = decodeAs(schema)
  const list = decodeAs(UnknownArray)
  return (u: unknown): ReadonlyArray<A> =>
    (list(u) ?? []).flatMap((x) => {
      const decoded = item(x)
      return decoded === undefined ? [] : [decoded]
    })
}

const asValue = decodeAs(ValueS)
const asPeriod = decodeAs(PeriodS)
const asIdentifier = decodeAs(IdentifierS)
const asAddress = decodeAs(AddressS)
const asContactPoint = decodeAs(ContactPointS)
const asOrganization = decodeAs(OrganizationS)
const organizations = listAs(OrganizationS)
const asClassification = decodeAs(ClassificationS)
const classifications = listAs(ClassificationS)
const items = listAs(ItemS)
const budgetClassifications = listAs(BudgetClassificationS)
const budgetBreakdowns = listAs(BudgetBreakdownS)
const asBudget = decodeAs(BudgetS)
const asPlanning = decodeAs(PlanningS)
const transactions = listAs(TransactionS)
const asImplementation = decodeAs(ImplementationS)
const awardsOf = listAs(AwardS)
const contractsOf = listAs(ContractS)
const asTender = decodeAs(TenderS)
const asRelease = decodeAs(ReleaseS)
const releases = listAs(ReleaseS)
const asElement = decodeAs(ElementS)
const asPublisher = decodeAs(PublisherS)
const asPackageInfo = decodeAs(PackageInfoS)
const asText = decodeAs(Text)
const texts = listAs(Text)
const asUnknownArray = decodeAs(UnknownArray)

const ENTITY = /&(#\d+|#x[0-9a-f]+|amp|quot|apos|lt|gt);/giu
const NAMED_ENTITIES: ReadonlyMap<string, string> = new Map([
  ["amp", "&"],
  ["quot", "\""],
  ["apos", "'"],
  ["lt", "<"],
  ["gt", ">"]
])

/** HTML character references decoded (GACM writes "&" as "&#38;" in names and RFCs). */
export const decodeEntities = (s: string): string =>
  s.replace(ENTITY, (match, body: string) => {
    const lower = body.toLowerCase()
    const code = lower.startsWith("#x") ? Number.parseInt(lower.slice(2), 16) : lower.startsWith("#")
      ? Number.parseInt(lower.slice(1), 10)
      : Number.NaN
    if (Number.isFinite(code)) return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match
    return NAMED_ENTITIES.get(lower) ?? match
  })

/** A JSON string or number as trimmed text with HTML entities decoded; null for anything else or empty. */
const textOf = (u: unknown): string | null => {
  const value = asText(u)
  if (value === undefined) return null
  const text = decodeEntities(typeof value === "number" ? String(value) : value).trim()
  return text === "" ? null : text
}

/** Text with at least one letter (APF prints "." as a contract title, GACM "0" as an address). */
const meaningful = (s: string | null): string | null => (s !== null && /[\p{L}]/u.test(s) ? s : null)

const firstOf = <A>(...values: ReadonlyArray<A | null | undefined>): A | null => {
  for (const value of values) if (value !== null && value !== undefined) return value
  return null
}

// ---------------------------------------------------------------------------
// Money

interface Money {
  readonly amount: string
  readonly currency: { readonly code: string; readonly reported: string | null } | null
}

const moneyOf = (u: unknown): Money | undefined => {
  const value = asValue(u)
  if (value === undefined) return undefined
  const raw = asText(value.amount)
  const amount = raw === undefined ? undefined : parseDecimal(raw)
  if (amount === undefined) return undefined
  return { amount, currency: parseCurrency(textOf(value.currency)) ?? null }
}

/** Exact sum of decimal strings (scaled BigInt arithmetic, no floats). */
export const addDecimals = (a: string, b: string): string => {
  const scale = Math.max(a.split(".")[1]?.length ?? 0, b.split(".")[1]?.length ?? 0)
  const scaled = (d: string): bigint => {
    const negative = d.startsWith("-")
    const [whole = "0", fraction = ""] = d.replace(/^-/u, "").split(".")
    const value = BigInt(`${whole}${fraction.padEnd(scale, "0")}`)
    return negative ? -value : value
  }
  const sum = scaled(a) + scaled(b)
  const negative = sum < 0n
  const digits = (negative ? -sum : sum).toString().padStart(scale + 1, "0")
  const whole = digits.slice(0, digits.length - scale)
  const fraction = scale === 0 ? "" : digits.slice(digits.length - scale).replace(/0+$/u, "")
  const text = fraction === "" ? whole : `${whole}.${fraction}`
  return negative && text !== "0" ? `-${text}` : text
}

/**
 * `money` with the non-ISO currency spelling of `other` when both state the same amount in the same currency and
 * only `other` was misspelled (GACM writes "MNX" on an award whose contract says MXN): the publisher did print
 * that spelling for this amount, so the load report keeps it.
 */
const withReportedSpelling = (money: Money | undefined, other: Money | undefined): Money | undefined =>
  money !== undefined && other !== undefined && money.currency !== null && money.currency.reported === null &&
    other.currency !== null && other.currency.reported !== null && other.currency.code === money.currency.code &&
    other.amount === money.amount
    ? { amount: money.amount, currency: other.currency }
    : money

/** One amount for several values, only when they share one currency (never summed across currencies). */
const sumMoney = (values: ReadonlyArray<Money>): Money | undefined => {
  const [first, ...rest] = values
  if (first === undefined) return undefined
  const code = first.currency?.code ?? null
  if (rest.some((m) => (m.currency?.code ?? null) !== code)) return undefined
  return rest.reduce<Money>((acc, m) => ({
    amount: addDecimals(acc.amount, m.amount),
    currency: acc.currency !== null && acc.currency.reported === null ? m.currency : acc.currency
  }), first)
}

// ---------------------------------------------------------------------------
// COG partidas

const PARTIDA = /^[1-9]\d{4}$/u

/**
 * The partida específica of a classification: scheme CUCoP with a five-digit id. An 8-digit CUCoP item is the
 * partida genérica plus a sequence number, so it names no partida específica (see the module comment).
 */
const partidaOfClassification = (u: unknown): string | null => {
  const classification = asClassification(u)
  if (classification === undefined) return null
  const scheme = foldWords(textOf(classification.scheme) ?? "")
  const id = (textOf(classification.id) ?? "").replace(/\s+/gu, "")
  return scheme.includes("cucop") && PARTIDA.test(id) ? id : null
}

const partidasOfItems = (u: unknown): ReadonlyArray<string> =>
  items(u).flatMap((item) =>
    [item.classification, ...classifications(item.additionalClassifications)].flatMap((c) => {
      const partida = partidaOfClassification(c)
      return partida === null ? [] : [partida]
    })
  )

/** Budget classifications of a breakdown, under either spelling APF uses (budgetClassification in contracts). */
const classificationsOf = (breakdown: typeof BudgetBreakdownS.Type) => [
  ...budgetClassifications(breakdown.budgetClassification),
  ...budgetClassifications(breakdown.budgetclassifications)
]

/** Budget breakdown entries classified "Economic" whose id is a five-digit partida (APF). */
const partidasOfBreakdown = (u: unknown): ReadonlyArray<string> =>
  budgetBreakdowns(u).flatMap((breakdown) =>
    classificationsOf(breakdown)
      .flatMap((c) => {
        const kind = foldWords(textOf(c.classification) ?? textOf(c.classifications) ?? "")
        const id = textOf(c.id) ?? ""
        return kind === "economic" && PARTIDA.test(id) ? [id] : []
      })
  )

const partidaDescriptions = (u: unknown): ReadonlyArray<string> =>
  budgetBreakdowns(u).flatMap((breakdown) =>
    classificationsOf(breakdown)
      .flatMap((c) => {
        const kind = foldWords(textOf(c.classification) ?? textOf(c.classifications) ?? "")
        const description = meaningful(textOf(c.description))
        return kind === "economic" && description !== null ? [description] : []
      })
  )

const planningPartidas = (release: Release): ReadonlyArray<string> => {
  const budget = asBudget(asPlanning(release.planning)?.budget)
  if (budget === undefined) return []
  const objeto = textOf(budget.objeto_del_gasto) ?? ""
  return [...(PARTIDA.test(objeto) ? [objeto] : []), ...partidasOfBreakdown(budget.budgetBreakdown)]
}

const contractPartidas = (contract: Contract): ReadonlyArray<string> => [
  ...partidasOfItems(contract.items),
  ...partidasOfBreakdown(asImplementation(contract.implementation)?.budgetBreakdown)
]

const unique = (values: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(values)]

// ---------------------------------------------------------------------------
// Roles, buyer, suppliers

const rolesOf = (org: Organization): ReadonlyArray<string> => texts(org.roles).map((r) => foldWords(String(r)))

const SUPPLIER_ROLES: ReadonlySet<string> = new Set(["supplier", "proveedor o contratista", "proveedor", "contratista"])
const BUYER_ROLES: ReadonlySet<string> = new Set([
  "buyer",
  "procuringentity",
  "payer",
  "comprador",
  "entidad que realiza la contratacion"
])

const isSupplierParty = (org: Organization): boolean => rolesOf(org).some((r) => SUPPLIER_ROLES.has(r))
const isBuyerParty = (org: Organization): boolean => rolesOf(org).some((r) => BUYER_ROLES.has(r))

/** A valid, non-generic RFC from an identifier-like text ("RFC-ABC010101AB1", "C&#38;B050317SU4"). */
export const rfcFromIdentifier = (text: string | null): string | null => {
  if (text === null) return null
  const rfc = parseRfc(decodeEntities(text).replace(/^RFC[-:\s]*/iu, ""))
  return rfc === undefined || GENERIC_RFCS.has(rfc) ? null : rfc
}

const orgName = (org: Organization): string | null =>
  firstOf(textOf(org.name), textOf(asIdentifier(org.identifier)?.legalName), textOf(org.legalName))

/** RFCs an organization entry carries: its identifier id, then its own id. */
const orgRfc = (org: Organization): string | null =>
  firstOf(rfcFromIdentifier(textOf(asIdentifier(org.identifier)?.id)), rfcFromIdentifier(textOf(org.id)))

interface ReleaseContext {
  readonly ocid: string
  readonly release: Release
  readonly parties: ReadonlyArray<Organization>
  /** Every organization entry of the release (parties, tenderers, award and contract suppliers). */
  readonly allOrgs: ReadonlyArray<Organization>
  /** The buyer's own RFCs, never a supplier's. */
  readonly buyerRfcs: ReadonlySet<string>
  /** Payees of contract transactions: name key → RFC. */
  readonly payees: ReadonlyArray<{ readonly nameKey: string; readonly rfc: string }>
}

const contextOf = (release: Release, ocid: string): ReleaseContext => {
  const parties = organizations(release.parties)
  const tender = asTender(release.tender)
  const awards = awardsOf(release.awards)
  const contracts = contractsOf(release.contracts)
  const buyer = asOrganization(release.buyer)
  const allOrgs = [
    ...parties,
    ...organizations(tender?.tenderers),
    ...awards.flatMap((a) => organizations(a.suppliers)),
    ...contracts.flatMap((c) => organizations(c.suppliers))
  ]
  const txs = contracts.flatMap((c) => transactions(asImplementation(c.implementation)?.transactions))
  const buyerRfcs = new Set(
    [
      ...(buyer === undefined ? [] : [orgRfc(buyer)]),
      ...parties.filter(isBuyerParty).map(orgRfc),
      ...txs.flatMap((t) => [t.providerOrganization, t.payer].map((o) => {
        const org = asOrganization(o)
        return org === undefined ? null : orgRfc(org)
      }))
    ].filter((rfc): rfc is string => rfc !== null)
  )
  const payees = txs.flatMap((t) =>
    [t.receiverOrganization, t.payee].flatMap((o) => {
      const org = asOrganization(o)
      if (org === undefined) return []
      const rfc = orgRfc(org)
      const name = firstOf(textOf(org.legalName), orgName(org))
      return rfc === null || name === null || buyerRfcs.has(rfc) ? [] : [{ nameKey: normalizeName(name), rfc }]
    })
  )
  return { ocid, release, parties, allOrgs, buyerRfcs, payees }
}

interface Buyer {
  readonly name: string | null
  readonly acronym: string | null
  readonly stateCode: string | null
}

const ACRONYM = /^[A-Z][A-Z0-9./-]{1,15}$/u

/**
 * Buyer name and acronym: "ACR | Name" is split; a short all-capital name beside a different legal name is the
 * acronym (INAI "DGPAR"), and so is an all-letter identifier that is not an RFC (GACM).
 */
const buyerOf = (ref: Organization | undefined, context: ReleaseContext): Buyer => {
  const refId = ref === undefined ? null : textOf(ref.id)
  const refName = ref === undefined ? null : textOf(ref.name)
  const party = firstOf(
    refId === null ? undefined : context.parties.find((p) => textOf(p.id) === refId),
    refName === null ? undefined : context.parties.find((p) => textOf(p.name) === refName),
    ref === undefined || (refId === null && refName === null) ? context.parties.find(isBuyerParty) : undefined
  )
  const orgs = [party, ref].filter((o): o is Organization => o !== null && o !== undefined)
  const legalName = firstOf(
    ...orgs.map((o) => textOf(asIdentifier(o.identifier)?.legalName)),
    ...orgs.map((o) => textOf(o.legalName))
  )
  const shortName = firstOf(...orgs.map((o) => textOf(o.name)))
  const identifierId = firstOf(...orgs.map((o) => textOf(asIdentifier(o.identifier)?.id)))
  const full = firstOf(legalName, shortName)
  const split = full === null ? null : /^(.{1,40}?)\s+\|\s+(.+)$/u.exec(full)
  const name = split === null ? full : (split[2] ?? full)
  const acronym = split !== null
    ? (split[1] ?? null)
    : shortName !== null && legalName !== null && shortName !== legalName && ACRONYM.test(shortName)
    ? shortName
    : identifierId !== null && /^[A-Z]{2,10}$/u.test(identifierId) && rfcFromIdentifier(identifierId) === null
    ? identifierId
    : null
  return { name, acronym, stateCode: firstOf(...orgs.map(stateOf)) }
}

const stateOf = (org: Organization): string | null => {
  const region = textOf(asAddress(org.address)?.region)
  if (region === null) return null
  const resolved = resolveState(region)
  return resolved._tag === "Resolved" ? resolved.code : null
}

interface Supplier {
  /** RFC, else the published supplier id, else the normalized name. */
  readonly key: string
  readonly id: string | null
  readonly rfc: string | null
  readonly name: string
  readonly legalName: string | null
  readonly orgs: ReadonlyArray<Organization>
}

const foldedPrefix = (s: string): string => foldText(s).replace(/[\s.,]+$/u, "")

/** The supplier a reference names, resolved against the parties and the contract payees; undefined without a name. */
const resolveSupplier = (ref: Organization, context: ReleaseContext): Supplier | undefined => {
  const id = textOf(ref.id)
  const party = id === null ? undefined : context.parties.find((p) => textOf(p.id) === id)
  const orgs = party === undefined ? [ref] : [party, ref]
  const baseName = firstOf(...orgs.map(orgName))
  if (baseName === null) return undefined
  const ownRfc = firstOf(...orgs.map((o) => {
    const rfc = orgRfc(o)
    return rfc === null || context.buyerRfcs.has(rfc) ? null : rfc
  }))
  const nameKey = normalizeName(baseName)
  const rfc = ownRfc ?? (context.payees.find((p) => p.nameKey === nameKey)?.rfc ?? null)
  // Truncated names (CDMX): another entry for the same organization may carry the longer name.
  const identifierIds = new Set(
    orgs.map((o) => textOf(asIdentifier(o.identifier)?.id)).filter((x): x is string => x !== null)
  )
  const sameOrg = (o: Organization): boolean => {
    const otherId = textOf(asIdentifier(o.identifier)?.id)
    return (rfc !== null && orgRfc(o) === rfc) || (otherId !== null && identifierIds.has(otherId)) ||
      (id !== null && textOf(o.id) === id)
  }
  const prefix = foldedPrefix(baseName)
  const name = context.allOrgs.filter(sameOrg).map((o) => textOf(o.name)).reduce<string>(
    (best, candidate) =>
      candidate !== null && candidate.length > best.length && foldText(candidate).startsWith(prefix) ? candidate : best,
    baseName
  )
  const legalName = firstOf(...orgs.map((o) => textOf(asIdentifier(o.identifier)?.legalName)))
  return { key: rfc ?? id ?? normalizeName(name), id, rfc, name, legalName, orgs }
}

const sameSupplier = (a: Organization, supplier: Supplier, context: ReleaseContext): boolean => {
  const other = resolveSupplier(a, context)
  return other !== undefined &&
    (other.key === supplier.key || normalizeName(other.name) === normalizeName(supplier.name))
}

// ---------------------------------------------------------------------------
// Procedure type and actionability

const METHOD_TYPES: ReadonlyMap<string, ProcedureType> = new Map([
  ["open", "licitacion_publica"],
  ["selective", "invitacion_tres"],
  ["limited", "adjudicacion_directa"],
  ["direct", "adjudicacion_directa"]
])

/** Procedure type and the raw text it was read from (details, else rationale, else the method code). */
export const ocdsProcedureType = (
  details: string | null,
  rationale: string | null,
  method: string | null
): { readonly type: ProcedureType | null; readonly text: string | null } => {
  const fromDetails = procedureTypeFromText(details)
  if (fromDetails !== null && fromDetails !== "other") return { type: fromDetails, text: details }
  const fromRationale = procedureTypeFromText(rationale)
  if (fromRationale !== null && fromRationale !== "other") return { type: fromRationale, text: rationale }
  if (method !== null) {
    const type = METHOD_TYPES.get(foldWords(method)) ?? "other"
    return { type, text: [method, details, rationale].filter((t) => t !== null).join("; ") }
  }
  if (fromDetails !== null) return { type: fromDetails, text: details }
  if (fromRationale !== null) return { type: fromRationale, text: rationale }
  return { type: null, text: null }
}

export interface OcdsActionability {
  readonly isOpen: boolean
  readonly actionability: "open_at_load" | "closed" | "awarded" | "cancelled" | "unknown"
  readonly reason: string
}

/**
 * Load-time actionability of a procedure from its tender status, the number of supplier awards published and
 * its tender period against the load date (`YYYY-MM-DD`). See the module comment for the order of the rules.
 */
export const ocdsActionability = (input: {
  readonly status: string | null
  /** Supplier awards published (award or contract rows with a supplier). */
  readonly awarded: number
  /** Signed contracts published, counted when no supplier is named. */
  readonly signedContracts: number
  readonly unsuccessful: boolean
  readonly tenderStart: string | null
  readonly tenderEnd: string | null
  readonly loadDate: string
}): OcdsActionability => {
  const status = input.status === null ? null : foldWords(input.status)
  const statusText = input.status === null
    ? "no tender status published"
    : `tender status ${input.status} recorded at load`
  if (status === "cancelled" || status === "withdrawn" || status === "cancelado") {
    return { isOpen: false, actionability: "cancelled", reason: `cancelled: ${statusText}` }
  }
  if (input.awarded > 0) {
    return {
      isOpen: false,
      actionability: "awarded",
      reason: `awarded: ${input.awarded} supplier award${input.awarded === 1 ? "" : "s"} published (${statusText})`
    }
  }
  if (input.signedContracts > 0) {
    return {
      isOpen: false,
      actionability: "awarded",
      reason: `awarded: ${input.signedContracts} signed contract${
        input.signedContracts === 1 ? "" : "s"
      } published, no supplier named (${statusText})`
    }
  }
  if (status === "unsuccessful" || input.unsuccessful) {
    return {
      isOpen: false,
      actionability: "closed",
      reason: `closed: no supplier awarded, award unsuccessful (${statusText})`
    }
  }
  if (status === "complete") {
    return { isOpen: false, actionability: "closed", reason: `closed: ${statusText}, no award to a supplier published` }
  }
  if (input.tenderEnd !== null && input.tenderEnd < input.loadDate) {
    return {
      isOpen: false,
      actionability: "closed",
      reason: `closed: tender period ended ${input.tenderEnd}, before the load date ${input.loadDate} (${statusText})`
    }
  }
  const started = input.tenderStart === null || input.tenderStart <= input.loadDate
  if ((status === "active" || status === null) && input.tenderEnd !== null && started) {
    return {
      isOpen: true,
      actionability: "open_at_load",
      reason:
        `open at load: tender period ends ${input.tenderEnd}, on or after the load date ${input.loadDate} (${statusText})`
    }
  }
  if (!started && input.tenderStart !== null) {
    return {
      isOpen: false,
      actionability: "unknown",
      reason:
        `unknown: tender period starts ${input.tenderStart}, after the load date ${input.loadDate}; not open yet (${statusText})`
    }
  }
  if (status === "planned" || status === "planning") {
    return {
      isOpen: false,
      actionability: "unknown",
      reason: `unknown: ${statusText}; the tender had not opened when published`
    }
  }
  return {
    isOpen: false,
    actionability: "unknown",
    reason: `unknown: ${statusText}, no award and no tender period end published; not treated as open`
  }
}

// ---------------------------------------------------------------------------
// Release → records

const EXCLUDED_AWARD_STATUSES: ReadonlySet<string> = new Set(["cancelled", "unsuccessful"])
const awardIncluded = (award: Award): boolean => !EXCLUDED_AWARD_STATUSES.has(foldWords(textOf(award.status) ?? ""))
const contractIncluded = (contract: Contract): boolean => foldWords(textOf(contract.status) ?? "") !== "cancelled"

const PLACEHOLDER_CONTACT = /no ?proporcionado|sin dato|no aplica/u
const published = (value: string | null): boolean =>
  value !== null && isPresent(value) && !PLACEHOLDER_CONTACT.test(foldText(value))

/** What a release says about its procedure; a later release of the ocid without a tender inherits it. */
export interface ProcedureFacts {
  readonly buyer: Buyer
  readonly procedureType: ProcedureType | null
  readonly procedureTypeText: string | null
  readonly contractingType: string | null
  readonly title: string
  readonly partidas: ReadonlyArray<string>
}

interface ReleaseOutput {
  readonly opportunity: unknown
  readonly awards: ReadonlyArray<unknown>
  readonly suppliers: ReadonlyArray<unknown>
  readonly facts: ProcedureFacts
}

const releaseTitle = (release: Release, tender: Tender | undefined): string => {
  const awards = awardsOf(release.awards)
  const contracts = contractsOf(release.contracts)
  const budget = asBudget(asPlanning(release.planning)?.budget)
  return firstOf(
    meaningful(textOf(tender?.title)),
    meaningful(textOf(tender?.description)),
    ...awards.map((a) => meaningful(textOf(a.title))),
    ...contracts.map((c) => meaningful(textOf(c.title))),
    ...contracts.flatMap((c) => partidaDescriptions(asImplementation(c.implementation)?.budgetBreakdown)),
    ...partidaDescriptions(budget?.budgetBreakdown),
    meaningful(textOf(budget?.description)),
    meaningful(textOf(budget?.project))
  ) ?? String(release.ocid)
}

/**
 * The records of one release (unvalidated; validated against the record schemas by the caller). `known` is what
 * earlier releases of the same ocid in the file said about the procedure: a release that omits it (Jalisco's
 * contract-stage release has no tender) fills its awards from it instead of overriding them with nulls.
 */
const mapRelease = (release: Release, loadDate: string, known: ProcedureFacts | undefined): ReleaseOutput => {
  const ocid = String(release.ocid).trim()
  const context = contextOf(release, ocid)
  const tender = asTender(release.tender)
  const awards = awardsOf(release.awards)
  const contracts = contractsOf(release.contracts)
  const ownBuyer = buyerOf(asOrganization(release.buyer), context)
  const procedure = ocdsProcedureType(
    textOf(tender?.procurementMethodDetails),
    textOf(tender?.procurementMethodRationale),
    textOf(tender?.procurementMethod)
  )
  const ownPartidas = unique([...partidasOfItems(tender?.items), ...planningPartidas(release)])
  const ownContracting = contractingTypeFromText(textOf(tender?.mainProcurementCategory))
  const tenderTitled = meaningful(textOf(tender?.title)) !== null || meaningful(textOf(tender?.description)) !== null
  const facts: ProcedureFacts = {
    buyer: ownBuyer.name === null && known !== undefined ? known.buyer : ownBuyer,
    procedureType: procedure.type ?? known?.procedureType ?? null,
    procedureTypeText: procedure.type === null ? (known?.procedureTypeText ?? null) : procedure.text,
    contractingType: ownContracting ?? known?.contractingType ?? null,
    title: !tenderTitled && known !== undefined ? known.title : releaseTitle(release, tender),
    partidas: ownPartidas.length === 0 && known !== undefined ? known.partidas : ownPartidas
  }
  const buyer = facts.buyer
  const procedurePartidas = facts.partidas

  // Awards
  const awardIds = new Set(awards.map((a) => textOf(a.id)).filter((id): id is string => id !== null))
  const awardRows: Array<unknown> = []
  const awardedSuppliers: Array<{ readonly ref: Organization; readonly supplier: Supplier }> = []
  awards.forEach((award, index) => {
    if (!awardIncluded(award)) return
    const refs = organizations(award.suppliers)
    const awardId = textOf(award.id)
    const linked = awardId === null
      ? []
      : contracts.filter((c) => textOf(c.awardID) === awardId && contractIncluded(c))
    for (const ref of refs) {
      const supplier = resolveSupplier(ref, context)
      if (supplier === undefined) continue
      awardedSuppliers.push({ ref, supplier })
      const matched = linked.filter((c) => {
        const named = organizations(c.suppliers)
        return named.length === 0 ? refs.length === 1 : named.some((s) => sameSupplier(s, supplier, context))
      })
      const contractMoney = sumMoney(
        matched.flatMap((c) => {
          const money = moneyOf(c.value) ?? moneyOf(c.valueWithTax)
          return money === undefined ? [] : [money]
        })
      )
      const awardMoney = moneyOf(award.value)
      const money = withReportedSpelling(contractMoney ?? awardMoney, awardMoney)
      // A contract value is this supplier's; an award value is too when the award has one supplier only.
      const scope = contractMoney !== undefined || refs.length === 1
        ? "supplier_contract"
        : "award_group_published_total"
      const signed = matched.map((c) => isoDateOf(textOf(c.dateSigned))).filter((d): d is string => d !== null).sort()
      const ownPartidas = unique([...partidasOfItems(award.items), ...matched.flatMap(contractPartidas)])
      awardRows.push({
        sourceRecordId: `${ocid}/${awardId ?? `award-${index + 1}`}/${supplier.key}`,
        opportunitySourceRecordId: ocid,
        title: firstOf(
          meaningful(textOf(award.title)),
          meaningful(textOf(award.description)),
          ...matched.map((c) => meaningful(textOf(c.title))),
          facts.title
        ),
        supplierRfc: supplier.rfc,
        supplierName: supplier.name,
        supplierSize: null,
        buyerName: buyer.name,
        buyerAcronym: buyer.acronym,
        procedureType: facts.procedureType,
        contractingType: facts.contractingType,
        awardDate: isoDateOf(textOf(award.date)) ?? signed[0] ?? null,
        amount: money?.amount ?? null,
        currency: money?.currency?.code ?? null,
        currencyReported: money?.currency?.reported ?? null,
        amountScope: scope,
        cogPartidas: ownPartidas.length > 0 ? ownPartidas : procedurePartidas,
        stateCode: buyer.stateCode
      })
    }
  })
  // Contracts published without their award (APF): one row per contract supplier.
  contracts.forEach((contract, index) => {
    const awardId = textOf(contract.awardID)
    if ((awardId !== null && awardIds.has(awardId)) || !contractIncluded(contract)) return
    const refs = organizations(contract.suppliers)
    const contractBuyer = firstOf(...organizations(contract.buyers).map((b) => buyerOf(b, context)))
    const money = moneyOf(contract.value) ?? moneyOf(contract.valueWithTax)
    const partidas = contractPartidas(contract)
    for (const ref of refs) {
      const supplier = resolveSupplier(ref, context)
      if (supplier === undefined) continue
      awardedSuppliers.push({ ref, supplier })
      const theBuyer = contractBuyer?.name === null || contractBuyer === null ? buyer : contractBuyer
      awardRows.push({
        sourceRecordId: `${ocid}/${awardId ?? textOf(contract.id) ?? `contract-${index + 1}`}/${supplier.key}`,
        opportunitySourceRecordId: ocid,
        title: firstOf(meaningful(textOf(contract.title)), meaningful(textOf(contract.description)), facts.title),
        supplierRfc: supplier.rfc,
        supplierName: supplier.name,
        supplierSize: null,
        buyerName: theBuyer.name,
        buyerAcronym: theBuyer.acronym,
        procedureType: facts.procedureType,
        contractingType: facts.contractingType,
        awardDate: isoDateOf(textOf(contract.dateSigned)),
        amount: money?.amount ?? null,
        currency: money?.currency?.code ?? null,
        currencyReported: money?.currency?.reported ?? null,
        amountScope: refs.length <= 1 ? "supplier_contract" : "award_group_published_total",
        cogPartidas: partidas.length > 0 ? unique(partidas) : procedurePartidas,
        stateCode: theBuyer.stateCode ?? buyer.stateCode
      })
    }
  })

  // Supplier observations: supplier parties plus every awarded supplier.
  const observed = new Map<string, unknown>()
  const observe = (supplier: Supplier) => {
    if (observed.has(supplier.key)) return
    const all = [...supplier.orgs, ...context.allOrgs.filter((o) => resolveSupplier(o, context)?.key === supplier.key)]
    const address = firstOf(...all.map((o) => (textOf(asAddress(o.address)?.region) === null ? null : o)))
    // Each contact field from the first entry that publishes it (CDMX repeats suppliers with partial contacts).
    const contactPoints = all.flatMap((o) => {
      const point = asContactPoint(o.contactPoint)
      return point === undefined ? [] : [point]
    })
    const phone = firstOf(...contactPoints.map((c) => textOf(c.telephone)))
    const email = firstOf(...contactPoints.map((c) => textOf(c.email)))
    const website = firstOf(...contactPoints.map((c) => textOf(c.url)))
    observed.set(supplier.key, {
      sourceRecordId: `${ocid}/${supplier.key}`,
      name: supplier.name,
      legalName: supplier.legalName,
      rfc: supplier.rfc,
      scianCode: null,
      scianTitle: null,
      stateCode: address === null ? null : stateOf(address),
      municipalityCode: null,
      employmentBand: null,
      establishmentType: null,
      incorporatedOn: null,
      hasPhone: published(phone),
      hasEmail: published(email),
      hasWebsite: published(website),
      contact: { phone, email, website }
    })
  }
  for (const party of context.parties.filter(isSupplierParty)) {
    const supplier = resolveSupplier(party, context)
    if (supplier !== undefined) observe(supplier)
  }
  for (const { supplier } of awardedSuppliers) observe(supplier)

  // Opportunity
  const period = asPeriod(tender?.tenderPeriod)
  const tenderStart = isoDateOf(textOf(period?.startDate))
  const tenderEnd = isoDateOf(textOf(period?.endDate))
  const signedContracts = contracts.filter((c) => contractIncluded(c) && textOf(c.dateSigned) !== null).length
  const action = ocdsActionability({
    status: textOf(tender?.status),
    awarded: awardedSuppliers.length,
    signedContracts,
    unsuccessful: awards.length > 0 && awards.every((a) => !awardIncluded(a)),
    tenderStart,
    tenderEnd,
    loadDate
  })
  const tenderMoney = moneyOf(tender?.value)
  const title = facts.title
  const description = meaningful(textOf(tender?.description))
  const opportunity = tender === undefined ? null : {
    sourceRecordId: ocid,
    title,
    description: description === title ? null : description,
    buyerName: buyer.name,
    buyerAcronym: buyer.acronym,
    procedureType: facts.procedureType,
    procedureTypeText: facts.procedureTypeText,
    contractingType: facts.contractingType,
    statusText: textOf(tender.status),
    isOpen: action.isOpen,
    actionability: action.actionability,
    actionabilityReason: action.reason,
    publishedOn: isoDateOf(textOf(tender.datePublished)) ?? tenderStart,
    tenderStartOn: tenderStart,
    tenderEndOn: tenderEnd,
    stateCode: buyer.stateCode,
    cogPartidas: unique([
      ...procedurePartidas,
      ...awards.filter(awardIncluded).flatMap((a) => partidasOfItems(a.items)),
      ...contracts.filter(contractIncluded).flatMap(contractPartidas)
    ]),
    amount: tenderMoney?.amount ?? null,
    currency: tenderMoney?.currency?.code ?? null
  }
  return { opportunity, awards: awardRows, suppliers: [...observed.values()], facts }
}

// ---------------------------------------------------------------------------
// Elements → releases → items

const dateKey = (release: Release): number => {
  const text = textOf(release.date)
  const time = text === null ? Number.NaN : Date.parse(text)
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time
}

const releaseOfRecord = (u: unknown): Either.Either<Release, string> => {
  const record = asElement(u)
  if (record === undefined) return Either.left("record is not a JSON object")
  const compiled = asRelease(record.compiledRelease)
  if (compiled !== undefined) return Either.right(compiled)
  const latest = [...releases(record.releases)].sort((a, b) => dateKey(b) - dateKey(a))[0]
  return latest === undefined
    ? Either.left("record has no compiledRelease and its releases are only links (no embedded release with an ocid)")
    : Either.right(latest)
}

/**
 * The releases an element stands for: itself (release), its compiledRelease or latest release (record), or
 * those of its records / releases (packages). Left: why the element is not OCDS.
 */
export const releasesOfElement = (u: unknown): Either.Either<ReadonlyArray<Release>, string> => {
  const element = asElement(u)
  if (element === undefined) return Either.left("element is not a JSON object")
  if (element.records !== undefined) {
    const list = asUnknownArray(element.records) ?? []
    const results = list.map(releaseOfRecord)
    const good = results.flatMap((r) => (Either.isRight(r) ? [r.right] : []))
    if (good.length > 0) return Either.right(good)
    const firstError = results.find(Either.isLeft)
    return Either.left(`record package has no usable record${firstError === undefined ? "" : `: ${firstError.left}`}`)
  }
  if (element.compiledRelease !== undefined || (element.ocid !== undefined && element.releases !== undefined)) {
    return Either.map(releaseOfRecord(u), (release) => [release])
  }
  if (element.releases !== undefined) {
    const list = releases(element.releases)
    return list.length > 0 ? Either.right(list) : Either.left("release package has no release with an ocid")
  }
  if (element.ocid !== undefined) {
    const release = asRelease(u)
    return release === undefined ? Either.left("release ocid is not a string") : Either.right([release])
  }
  return Either.left("not an OCDS release, record, record package or release package (no ocid, records or releases)")
}

const decodeOpportunity = Schema.decodeUnknownEither(OpportunityRecord)
const decodeAward = Schema.decodeUnknownEither(AwardRecord)
const decodeSupplier = Schema.decodeUnknownEither(SupplierObservationRecord)

/** Procedure facts by ocid, as learnt from the releases read so far in a file. */
export type KnownProcedures = HashMap.HashMap<string, ProcedureFacts>

/**
 * The items of one top-level element: its records then `Accepted`, or one `Reject` with the reason; and the
 * procedure facts known after it.
 */
export const itemsOfElement = (
  element: JsonElement,
  loadDate: string,
  known: KnownProcedures = HashMap.empty()
): readonly [KnownProcedures, ReadonlyArray<LoadItem>] => {
  const line = element.index
  const reject = (reason: string): readonly [KnownProcedures, ReadonlyArray<LoadItem>] => [
    known,
    [{ _tag: "Reject", line, reason }]
  ]
  return Either.match(releasesOfElement(element.value), {
    onLeft: reject,
    onRight: (list) => {
      const out: Array<LoadItem> = []
      const errors: Array<string> = []
      let learnt = known
      const format = (what: string, error: ParseResult.ParseError) =>
        `${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
      for (const release of list) {
        const ocid = String(release.ocid).trim()
        const mapped = mapRelease(release, loadDate, Option.getOrUndefined(HashMap.get(learnt, ocid)))
        learnt = HashMap.set(learnt, ocid, mapped.facts)
        if (mapped.opportunity !== null) {
          Either.match(decodeOpportunity(mapped.opportunity), {
            onLeft: (e) => errors.push(format(`invalid opportunity ${ocid}`, e)),
            onRight: (record) => out.push({ _tag: "Opportunity", line, record })
          })
        }
        for (const award of mapped.awards) {
          Either.match(decodeAward(award), {
            onLeft: (e) => errors.push(format(`invalid award in ${ocid}`, e)),
            onRight: (record) => out.push({ _tag: "Award", line, record })
          })
        }
        for (const supplier of mapped.suppliers) {
          Either.match(decodeSupplier(supplier), {
            onLeft: (e) => errors.push(format(`invalid supplier observation in ${ocid}`, e)),
            onRight: (record) => out.push({ _tag: "SupplierObservation", line, record })
          })
        }
      }
      if (errors.length > 0) return reject(errors.join("; "))
      if (out.length === 0) {
        return reject(
          `${list.map((r) => String(r.ocid)).join(", ")}: no tender, no awarded supplier and no supplier party to load`
        )
      }
      return [learnt, [...out, { _tag: "Accepted", line }]]
    }
  })
}

/** The load date (`YYYY-MM-DD`, UTC) from the Effect clock. */
const loadDateNow: Effect.Effect<string> = Effect.map(
  Clock.currentTimeMillis,
  (millis) => new Date(millis).toISOString().slice(0, 10)
)

/**
 * Every top-level element of an OCDS file as items, in file order. Actionability is computed against the
 * load date read once from the Effect `Clock` when the stream starts.
 */
export const streamOcds = (path: string): Stream.Stream<LoadItem, SourceFileError> =>
  Stream.unwrap(
    Effect.map(loadDateNow, (loadDate) =>
      jsonArrayElements(path).pipe(
        Stream.mapAccum(HashMap.empty<string, ProcedureFacts>(), (known, element) =>
          itemsOfElement(element, loadDate, known)),
        Stream.mapConcat((items) => items)
      ))
  )

/** Number of top-level elements (data rows), streamed like {@link streamOcds}. */
export const countOcdsDataRows = (path: string): Effect.Effect<number, SourceFileError> =>
  Stream.runCount(jsonArrayElements(path))

// ---------------------------------------------------------------------------
// Publisher detection

/** Texts naming the publisher of an element: publisher / packageInfo.publisher fields and the ocids. */
const publisherTexts = (u: unknown): ReadonlyArray<string> => {
  const element = asElement(u)
  if (element === undefined) return []
  const publishers = [asPublisher(element.publisher), asPublisher(asPackageInfo(element.packageInfo)?.publisher)]
  const fromPublishers = publishers.flatMap((p) =>
    p === undefined ? [] : [p.name, p.uid, p.uri, p.scheme].map(textOf).filter((t): t is string => t !== null)
  )
  const ocids = Either.match(releasesOfElement(u), {
    onLeft: () => [],
    onRight: (list) => list.map((r) => String(r.ocid))
  })
  return [...fromPublishers, ...ocids]
}

interface SourceRule {
  readonly source: SourceDefinition
  /** Matched against the folded publisher texts and ocids of the first element. */
  readonly content: RegExp
  /** Matched against the folded file name when the content names no publisher. */
  readonly file: RegExp
}

const SOURCE_RULES: ReadonlyArray<SourceRule> = [
  {
    source: ocdsApfSource,
    content: /funcion publica|hacienda y credito|contratacionesabiertas\/|^ocds-07smqs/u,
    file: /apf|contrataciones_abiertas|administracion_publica_federal/u
  },
  { source: ocdsInaiSource, content: /\binai\b|transparencia, acceso a la informacion/u, file: /inai/u },
  { source: ocdsCdmxSource, content: /cdmx|finanzas\.df\.gob|^ocds-87sd3t/u, file: /cdmx|sefin/u },
  {
    source: ocdsGacmSource,
    content: /\bgacm\b|aeropuerto\.gob|grupo aeroportuario/u,
    file: /gacm|naicm|aeroportuario/u
  },
  { source: ocdsJaliscoSource, content: /jalisco|gob-jal|^ocds-xs1qbl/u, file: /jalisco/u }
]

/**
 * The publisher of an OCDS file: from the first element's publisher names and ocid prefixes, else from the file
 * name; fails when neither names one of the five publishers.
 */
export const detectOcdsSource = (path: string): Effect.Effect<SourceDefinition, SourceFileError> =>
  jsonArrayElements(path).pipe(
    Stream.runHead,
    Effect.flatMap((head) => {
      const texts = Option.match(head, { onNone: () => [], onSome: (e) => publisherTexts(e.value) }).map(foldText)
      const byContent = SOURCE_RULES.find((rule) => texts.some((t) => rule.content.test(t)))
      const fileName = foldText(basename(path))
      const byName = SOURCE_RULES.find((rule) => rule.file.test(fileName))
      const found = byContent ?? byName
      return found === undefined
        ? Effect.fail(
          new SourceFileError({ path, message: "cannot tell the OCDS publisher from the content or the file name" })
        )
        : Effect.succeed(found.source)
    })
  )

export const ocdsParser: SourceParser = {
  kind: "ocds",
  description:
    "OCDS releases, records and packages of Mexican publishers (APF Contrataciones Abiertas, INAI, CDMX, GACM, Jalisco)",
  sourceOf: detectOcdsSource,
  stream: (path) => streamOcds(path),
  countDataRows: countOcdsDataRows
}
