/**
 * DENUE as a {@link SourceParser}.
 */
import { Effect, Stream } from "effect"
import { SourceDefinition } from "../Corpus.js"
import { SourceFileError } from "./csv.js"
import { countDataRows, streamDenue } from "./denue.js"
import type { SourceParser } from "./parser.js"
import type { LoadItem } from "./records.js"

export const denueSource = new SourceDefinition({
  slug: "inegi_denue",
  label: "Directorio Estadístico Nacional de Unidades Económicas",
  publisher: "INEGI",
  licence: "INEGI Términos de Libre Uso de la Información (attribution to INEGI)",
  licensedForDisplay: true,
  evidenceCategory: "supplier_or_organization_evidence"
})

export const denueParser: SourceParser = {
  kind: "denue",
  description: "INEGI DENUE establishments (bulk, web-download and API layouts)",
  sourceOf: () => Effect.succeed(denueSource),
  stream: (path, context) =>
    streamDenue(path, context).pipe(
      Stream.mapError((error) => new SourceFileError({ path, message: error.message })),
      Stream.flatMap((result): Stream.Stream<LoadItem> =>
        result._tag === "Reject"
          ? Stream.make<[LoadItem]>({ _tag: "Reject", line: result.line, reason: result.reason })
          : Stream.make<[LoadItem, LoadItem]>(
            {
              _tag: "SupplierObservation",
              line: result.line,
              record: {
                sourceRecordId: result.row.sourceRecordId,
                name: result.row.name,
                legalName: result.row.legalName,
                rfc: null,
                scianCode: result.row.scianCode,
                scianTitle: result.row.scianTitle,
                stateCode: result.row.stateCode,
                municipalityCode: result.row.municipalityCode,
                employmentBand: result.row.employmentBand,
                establishmentType: result.row.establishmentType,
                incorporatedOn: result.row.incorporatedOn,
                hasPhone: result.row.hasPhone,
                hasEmail: result.row.hasEmail,
                hasWebsite: result.row.hasWebsite,
                contact: result.row.contact
              }
            },
            { _tag: "Accepted", line: result.line }
          )
      )
    ),
  countDataRows: (path) => countDataRows(path).pipe(Effect.mapError((e) => new SourceFileError({ path, message: e.message })))
}
