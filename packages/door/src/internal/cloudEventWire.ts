/**
 * From the JSON members of a structured-mode CloudEvent to the shape the `CloudEvent` schema decodes:
 * attribute names checked, `null` dropped where it means "unset", extension attributes gathered in one
 * record. Not API: `CloudEvent.parse` is the public face.
 */
import * as Either from "effect/Either"
import { quote } from "./cloudEventText.js"

// CloudEvents 1.0 attribute naming: lower-case ASCII letters and digits. `data_base64` is a member of the
// JSON format, not an attribute, hence its underscore.
const ATTRIBUTE_NAME = /^[a-z0-9]+$/
const DATA_BASE64 = "data_base64"

/** Whether `name` may name a CloudEvents attribute. */
export const isAttributeName = (name: string): boolean => ATTRIBUTE_NAME.test(name)

/**
 * Splits the members of an event into known members (by name, from the schema) and an `extensions` record.
 * A JSON `null` on an optional member or an extension means unset and is dropped; on a required member it is
 * kept, so the schema reports it as a wrong type rather than as missing. Fails with a detail on the first
 * member whose name breaks the naming rule.
 */
export const split = (
  members: Readonly<Record<string, unknown>>,
  known: ReadonlySet<string>,
  required: ReadonlySet<string>
): Either.Either<Record<string, unknown>, string> => {
  const attributes: Record<string, unknown> = {}
  const extensions: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(members)) {
    if (name !== DATA_BASE64 && !isAttributeName(name)) {
      return Either.left(`attribute name ${quote(name)} must contain only lower-case letters a-z and digits 0-9`)
    }
    if (value === null && !required.has(name)) continue
    if (known.has(name)) attributes[name] = value
    else extensions[name] = value
  }
  return Either.right({ ...attributes, extensions })
}
