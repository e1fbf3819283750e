/**
 * A tool result's answer: the JSON of its one text block (decision 0074: no `structuredContent`).
 */
import * as Schema from "effect/Schema"

const OneTextBlock = Schema.Struct({ content: Schema.Tuple(Schema.Struct({ type: Schema.Literal("text"), text: Schema.parseJson() })) })

/** The JSON a tool answered, from the result as either official client returns it. */
export const answerOf = (result: unknown): unknown => Schema.decodeUnknownSync(OneTextBlock)(result).content[0].text
