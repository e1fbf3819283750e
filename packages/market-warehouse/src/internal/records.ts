/**
 * What source parsers emit: normalized records of the five warehouse kinds, one Effect Schema each. A parser
 * maps a file to a stream of {@link LoadItem}: every data row yields at least one item, and a row that cannot be
 * loaded yields exactly one `Reject` with its line and reason, so accepted + rejected = data rows.
 *
 * Conventions: dates are ISO `YYYY-MM-DD` strings (or null); amounts are exact decimal strings (never floats);
 * currency is an ISO 4217 code; RFCs are upper-case and validated (null when absent or invalid: a parser that
 * finds an invalid RFC keeps the row and reports the RFC as null, it does not reject the row for it);
 * `*_norm` name fields come from `normalizeName`; state codes are INEGI "01".."32".
 */
import * as Schema from "effect/Schema"

const Nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.NullOr(schema)
const IsoDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/))
const Decimal = Schema.String.pipe(Schema.pattern(/^-?\d+(\.\d+)?$/))
const Currency = Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))
const Rfc = Schema.String.pipe(Schema.pattern(/^[A-ZÑ&]{3,4}\d{6}[A-Z0-9]{3}$/))
const StateCode = Schema.String.pipe(Schema.pattern(/^\d{2}$/))
const Partida = Schema.String.pipe(Schema.pattern(/^\d{5}$/))

/** A published observation of an organization or establishment. @since 0.1.0 */
export const SupplierObservationRecord = Schema.Struct({
  sourceRecordId: Schema.String,
  name: Schema.String,
  legalName: Nullable(Schema.String),
  rfc: Nullable(Rfc),
  scianCode: Nullable(Schema.String),
  scianTitle: Nullable(Schema.String),
  stateCode: Nullable(StateCode),
  municipalityCode: Nullable(Schema.String),
  employmentBand: Nullable(Schema.String),
  establishmentType: Nullable(Schema.String),
  incorporatedOn: Nullable(Schema.String),
  hasPhone: Schema.Boolean,
  hasEmail: Schema.Boolean,
  hasWebsite: Schema.Boolean,
  /** Contact coordinates as published; stored, never served. */
  contact: Schema.Struct({
    phone: Nullable(Schema.String),
    email: Nullable(Schema.String),
    website: Nullable(Schema.String)
  })
})
export type SupplierObservationRecord = typeof SupplierObservationRecord.Type

/** Load-time actionability of a procedure, derived from its status and dates as recorded. @since 0.1.0 */
export const Actionability = Schema.Literal("open_at_load", "closed", "awarded", "cancelled", "unknown")

/** A public procurement procedure. @since 0.1.0 */
export const OpportunityRecord = Schema.Struct({
  /** Procedure identity within the source (OCDS ocid, CompraNet NUMERO_PROCEDIMIENTO). */
  sourceRecordId: Schema.String,
  title: Schema.String,
  description: Nullable(Schema.String),
  buyerName: Nullable(Schema.String),
  buyerAcronym: Nullable(Schema.String),
  /** Normalized procedure type: licitacion_publica, invitacion_tres, adjudicacion_directa, other (raw text kept in procedureTypeText). */
  procedureType: Nullable(Schema.String),
  procedureTypeText: Nullable(Schema.String),
  /** goods, services, works, or null. */
  contractingType: Nullable(Schema.String),
  /** The publisher's status text as recorded (e.g. "active", "complete", "EXPIRADO"). */
  statusText: Nullable(Schema.String),
  isOpen: Schema.Boolean,
  actionability: Actionability,
  actionabilityReason: Schema.String,
  publishedOn: Nullable(IsoDate),
  tenderStartOn: Nullable(IsoDate),
  tenderEndOn: Nullable(IsoDate),
  stateCode: Nullable(StateCode),
  cogPartidas: Schema.Array(Partida),
  amount: Nullable(Decimal),
  currency: Nullable(Currency)
})
export type OpportunityRecord = typeof OpportunityRecord.Type

/** The two amount quantities, never summed together. @since 0.1.0 */
export const AmountScope = Schema.Literal("supplier_contract", "award_group_published_total")

/** A publication that a contract was awarded. @since 0.1.0 */
export const AwardRecord = Schema.Struct({
  /** Unique within the source: e.g. `<ocid>/<award id>/<supplier id>` or the CompraNet contract code. */
  sourceRecordId: Schema.String,
  /** sourceRecordId of the procedure (OpportunityRecord) it belongs to, when known. */
  opportunitySourceRecordId: Nullable(Schema.String),
  title: Nullable(Schema.String),
  supplierRfc: Nullable(Rfc),
  supplierName: Schema.String,
  supplierSize: Nullable(Schema.String),
  buyerName: Nullable(Schema.String),
  buyerAcronym: Nullable(Schema.String),
  procedureType: Nullable(Schema.String),
  contractingType: Nullable(Schema.String),
  awardDate: Nullable(IsoDate),
  amount: Nullable(Decimal),
  currency: Nullable(Currency),
  /** The currency text as published when it was mapped (e.g. "MNX" -> MXN), else null. */
  currencyReported: Nullable(Schema.String),
  amountScope: AmountScope,
  cogPartidas: Schema.Array(Partida),
  stateCode: Nullable(StateCode)
})
export type AwardRecord = typeof AwardRecord.Type

/** Status of a risk mark as listed. @since 0.1.0 */
export const RiskStatus = Schema.Literal(
  "presunto",
  "definitivo",
  "desvirtuado",
  "sentencia_favorable",
  "definitivo_69b_bis",
  "sancion_multa",
  "sancion_inhabilitacion",
  "sancion_multa_inhabilitacion",
  "sancion_otra"
)

/** A published administrative mark: a listing, not a conviction. @since 0.1.0 */
export const RiskMarkRecord = Schema.Struct({
  sourceRecordId: Schema.String,
  kind: Schema.Literal("efos", "sancion"),
  /** "art_69b", "art_69b_bis", "sfp_directory". */
  legalBasis: Schema.String,
  subjectRfc: Nullable(Rfc),
  subjectName: Schema.String,
  status: RiskStatus,
  statusText: Schema.String,
  /** Date of the listing stage that gives the current status (DOF publication preferred). */
  listedOn: Nullable(IsoDate),
  /** Dates of each stage when published: presunto, desvirtuado, definitivo, sentencia_favorable, resolution, notification. */
  stageDates: Schema.Record({ key: Schema.String, value: IsoDate }),
  sanctioningBody: Nullable(Schema.String),
  caseId: Nullable(Schema.String),
  sanctionType: Nullable(Schema.String),
  /** Disqualification period as published ("4 AÑOS", "1 AÑO 6 MESES"). */
  period: Nullable(Schema.String),
  fineAmount: Nullable(Decimal),
  fineCurrency: Nullable(Currency)
})
export type RiskMarkRecord = typeof RiskMarkRecord.Type

/** A permit or concession recorded when granted. @since 0.1.0 */
export const PermitRecord = Schema.Struct({
  sourceRecordId: Schema.String,
  permitNumber: Schema.String,
  holderName: Schema.String,
  holderRfc: Nullable(Rfc),
  plantName: Nullable(Schema.String),
  permitType: Nullable(Schema.String),
  statusText: Schema.String,
  /** True while the permit is recorded as in force but not yet operating (construction, works not started). */
  isActiveRisk: Schema.Boolean,
  isTerminated: Schema.Boolean,
  isExpansion: Schema.Boolean,
  investmentMdd: Nullable(Decimal),
  capacityMw: Nullable(Decimal),
  estimatedGeneration: Nullable(Decimal),
  fuel: Nullable(Schema.String),
  technology: Nullable(Schema.String),
  stateCode: Nullable(StateCode),
  grantedOn: Nullable(IsoDate),
  operationStartText: Nullable(Schema.String),
  endedOn: Nullable(IsoDate)
})
export type PermitRecord = typeof PermitRecord.Type

/** One item of a parsed file. @since 0.1.0 */
export type LoadItem =
  | { readonly _tag: "SupplierObservation"; readonly line: number; readonly record: SupplierObservationRecord }
  | { readonly _tag: "Opportunity"; readonly line: number; readonly record: OpportunityRecord }
  | { readonly _tag: "Award"; readonly line: number; readonly record: AwardRecord }
  | { readonly _tag: "RiskMark"; readonly line: number; readonly record: RiskMarkRecord }
  | { readonly _tag: "Permit"; readonly line: number; readonly record: PermitRecord }
  | { readonly _tag: "Reject"; readonly line: number; readonly reason: string }
  /** Marks that the data row on `line` was accepted (emitted once per accepted row, after its records). */
  | { readonly _tag: "Accepted"; readonly line: number }
