/**
 * The mapping of a `webhook` Source: what a tool's notice means, confirmed by a person (template Sources start
 * with their template's mapping, confirmed as version 1). One structure serves template and generic Sources, so
 * processing always reads a notice through the Source's current mapping:
 *
 * - `event_type`: where the notice's type sits (alternatives, as in {@link Templates.Rules}); for a batch it is
 *   read on each element first, then on the whole notice;
 * - `accepted_events`: the types that carry a person; empty means every notice does;
 * - `notice_id`: the duplicate key the tool sends (read on the element for a batch);
 * - `items`: null for one person per notice, or a path to the list of people of a batch notice (`contacts`,
 *   `data.people[]`, or `[]` for a body that is itself a list);
 * - `fields`: where each person field sits, relative to the notice or to a batch element.
 *
 * Paths use the language of {@link Templates}. {@link propose} derives a first mapping from an example notice by
 * the names and shapes of its values; {@link undecidedPaths} lists the leaf paths a mapping leaves unused.
 * {@link TEST_MAILBOXES} says which emails name no person.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Path from "./internal/templatePath.js"
import * as Templates from "./Templates.js"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/** Where each person field sits; a field left out is never present. @since 0.1.0 @category models */
export const MappingFields = Schema.Struct({
  email: Schema.optional(Templates.Rules),
  phone: Schema.optional(Templates.Rules),
  name: Schema.optional(Templates.Rules),
  first_name: Schema.optional(Templates.Rules),
  last_name: Schema.optional(Templates.Rules),
  company: Schema.optional(Templates.Rules),
  website: Schema.optional(Templates.Rules),
  role: Schema.optional(Templates.Rules)
})
/** @since 0.1.0 @category models */
export type MappingFields = typeof MappingFields.Type

/** A mapping as a person confirms it (and as a proposal is shown). @since 0.1.0 @category models */
export const MappingInput = Schema.Struct({
  event_type: Templates.Rules,
  accepted_events: Schema.Array(Schema.String),
  notice_id: Templates.Rules,
  items: Schema.NullOr(Schema.String),
  fields: MappingFields
})
/** @since 0.1.0 @category models */
export type MappingInput = typeof MappingInput.Type

/** A confirmed mapping as stored: each confirmation raises `version` (the first is 1). @since 0.1.0 @category models */
export const SourceMapping = Schema.Struct({
  version: Schema.Int.pipe(Schema.positive()),
  ...MappingInput.fields
})
/** @since 0.1.0 @category models */
export type SourceMapping = typeof SourceMapping.Type

/** The person fields read from one notice or batch element; null where absent. @since 0.1.0 @category models */
export const Reading = Schema.Struct({
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  first_name: Schema.NullOr(Schema.String),
  last_name: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  role: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Reading = typeof Reading.Type

// -----------------------------------------------------------------------------
// Templates
// -----------------------------------------------------------------------------

// PostHog's destination sends only the events its owner filters for, and which of them name a person depends on
// the owner's tracking (reference: webhooks 4.11): its Sources accept every event the tool chose to send.
const SENDER_CHOOSES_EVENTS: ReadonlyArray<Templates.TemplateName> = ["posthog"]

/**
 * The mapping a template Source starts with: the template's own paths and person events.
 *
 * @since 0.1.0 @category constructors
 */
export const fromTemplate = (template: Templates.Template): MappingInput => ({
  event_type: template.eventTypePath,
  accepted_events: SENDER_CHOOSES_EVENTS.includes(template.name) ? [] : template.personEvents,
  notice_id: template.noticeIdPath,
  items: null,
  fields: template.defaultMapping
})

// -----------------------------------------------------------------------------
// Validation
// -----------------------------------------------------------------------------

/**
 * Why a mapping cannot be confirmed (paths that do not compile, an `items` path on a header), or nothing.
 *
 * @since 0.1.0 @category validation
 */
export const problems = (mapping: MappingInput): ReadonlyArray<string> => {
  const named = (where: string, rules: Templates.Rules) => Templates.mappingErrors(rules).map((why) => `${where}: ${why}`)
  const fieldProblems = Templates.PersonField.literals.flatMap((field) => named(`fields.${field}`, mapping.fields[field] ?? []))
  const items = mapping.items
  const itemProblems = items === null
    ? []
    : items.trim().toLowerCase().startsWith("header:")
    ? ["items: a list of people is in the body, not in a header"]
    : named("items", [items])
  return [...named("event_type", mapping.event_type), ...named("notice_id", mapping.notice_id), ...itemProblems, ...fieldProblems]
}

// -----------------------------------------------------------------------------
// Reading
// -----------------------------------------------------------------------------

/**
 * The elements of a notice: the notice itself when the mapping has no `items`, else the list its path leads
 * to (a path ending in `[]` yields the elements; one that yields a single list is that list). `undefined` when
 * `items` leads to no list: the notice does not fit the mapping.
 *
 * @since 0.1.0 @category reading
 */
export const elements = (mapping: MappingInput, body: unknown, headers: Templates.Headers = {}): ReadonlyArray<unknown> | undefined => {
  if (mapping.items === null) return [body]
  const compiled = Path.compile(mapping.items)
  if (Either.isLeft(compiled)) return undefined
  const found = Path.evaluate(compiled.right, body, headers)
  const only = found.length === 1 ? found[0] : undefined
  if (Array.isArray(only)) return only
  return mapping.items.trim().endsWith("]") ? found : undefined
}

/** The type of an element: on the element first, then on the whole notice. @since 0.1.0 @category reading */
export const eventType = (
  mapping: MappingInput,
  element: unknown,
  body: unknown,
  headers: Templates.Headers = {}
): string | null => Templates.readRules(mapping.event_type, element, headers) ?? Templates.readRules(mapping.event_type, body, headers)

/** Whether the mapping takes notices of this type. @since 0.1.0 @category reading */
export const accepts = (mapping: MappingInput, type: string | null): boolean =>
  mapping.accepted_events.length === 0 || (type !== null && mapping.accepted_events.includes(type))

/** The person fields of one element. @since 0.1.0 @category reading */
export const read = (mapping: MappingInput, element: unknown, headers: Templates.Headers = {}): Reading => {
  const field = (name: Templates.PersonField): string | null => Templates.readRules(mapping.fields[name] ?? [], element, headers)
  return {
    email: field("email"),
    phone: field("phone"),
    name: field("name"),
    first_name: field("first_name"),
    last_name: field("last_name"),
    company: field("company"),
    website: field("website"),
    role: field("role")
  }
}

/**
 * Whether a notice fits its mapping: at least one of its paths (a person field, the notice id or the type) reads
 * a value. A notice that fits but yields no person field names no person; one that fits nothing is not
 * understood.
 *
 * @since 0.1.0 @category reading
 */
export const fits = (
  mapping: MappingInput,
  reading: Reading,
  element: unknown,
  body: unknown,
  headers: Templates.Headers = {}
): boolean =>
  Object.values(reading).some((value) => value !== null) ||
  Templates.readRules(mapping.notice_id, element, headers) !== null ||
  eventType(mapping, element, body, headers) !== null

// -----------------------------------------------------------------------------
// Test and shared mailboxes
// -----------------------------------------------------------------------------

/**
 * Emails that name no person: local parts of shared or robot mailboxes, and domains that can never receive mail
 * or only appear in documentation and test deliveries (RFC 2606 and RFC 6761 names). A notice whose email is one
 * of these ends `no_person`.
 *
 * @since 0.1.0 @category constants
 */
export const TEST_MAILBOXES = {
  localParts: [
    "noreply",
    "no-reply",
    "donotreply",
    "do-not-reply",
    "info",
    "test",
    "admin",
    "postmaster",
    "mailer-daemon",
    "webmaster",
    "hostmaster",
    "abuse"
  ],
  domains: ["example.com", "example.net", "example.org"],
  topLevelDomains: ["test", "invalid", "example", "localhost"]
} as const

/**
 * Why an email names no person (a test or shared mailbox), or null when it may name one. `+tags` are ignored.
 *
 * @since 0.1.0 @category predicates
 */
export const testMailbox = (email: string): string | null => {
  const at = email.lastIndexOf("@")
  if (at <= 0) return null
  const local = email.slice(0, at).toLowerCase().split("+")[0] ?? ""
  const domain = email.slice(at + 1).toLowerCase().replace(/\.$/, "")
  const tld = domain.split(".").pop() ?? ""
  if (TEST_MAILBOXES.localParts.some((part) => part === local)) return `${local}@ is a shared mailbox`
  if (TEST_MAILBOXES.domains.some((d) => d === domain || domain.endsWith(`.${d}`))) return `${domain} is a test domain`
  if (TEST_MAILBOXES.topLevelDomains.some((t) => t === tld)) return `.${tld} is a test domain`
  return null
}

// -----------------------------------------------------------------------------
// Leaves, undecided fields and proposals
// -----------------------------------------------------------------------------

const MAX_LEAVES = 500
const MAX_DEPTH = 8

/** A scalar value of a notice and the path to it (`a.b`, `list[]` for the elements of a list). */
interface Leaf {
  readonly path: string
  readonly key: string
  readonly value: string | number | boolean
  readonly depth: number
}

// Names the path language cannot address without ambiguity are left out.
const addressable = (key: string): boolean => key.length > 0 && !/[.[\]*@=~]/.test(key) && !/^header:/i.test(key)

const leaves = (root: unknown): ReadonlyArray<Leaf> => {
  const found: Array<Leaf> = []
  const seen = new Set<string>()
  const walk = (value: unknown, path: string, key: string, depth: number): void => {
    if (found.length >= MAX_LEAVES || depth > MAX_DEPTH) return
    if (Predicate.isString(value) || Predicate.isNumber(value) || Predicate.isBoolean(value)) {
      if (Predicate.isString(value) && value.trim() === "") return
      if (path !== "" && !seen.has(path)) {
        seen.add(path)
        found.push({ path, key, value, depth })
      }
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, `${path}[]`, key, depth + 1)
      return
    }
    if (Predicate.isRecord(value)) {
      for (const [name, item] of Object.entries(value)) {
        if (addressable(name)) walk(item, path === "" ? name : `${path}.${name}`, name, depth + 1)
      }
    }
  }
  walk(root, "", "", 0)
  return found
}

// A mapping path in the shape of a leaf path: filters and indexes become `[]`, `*` matches within a name.
const coverage = (path: string): RegExp | undefined => {
  if (/^\s*header:/i.test(path)) return undefined
  const normal = path.trim().replace(/\[[^\]]*\]/g, "[]")
  const pattern = normal.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^.\\[]*")
  return new RegExp(`^${pattern}$`, "i")
}

const pathsOf = (rules: Templates.Rules): ReadonlyArray<string> => rules.flatMap((rule) => (typeof rule === "string" ? [rule] : rule.concat))

const usedPaths = (mapping: MappingInput): ReadonlyArray<RegExp> =>
  [
    ...pathsOf(mapping.event_type),
    ...pathsOf(mapping.notice_id),
    ...Templates.PersonField.literals.flatMap((field) => pathsOf(mapping.fields[field] ?? []))
  ].flatMap((path) => {
    const regex = coverage(path)
    return regex === undefined ? [] : [regex]
  })

/** Whether the mapping reads a leaf path (as {@link undecidedPaths} writes them). @since 0.1.0 @category reading */
export const reads = (mapping: MappingInput, path: string): boolean => usedPaths(mapping).some((regex) => regex.test(path))

/**
 * The leaf paths of an element (or notice) that the mapping does not read: fields a person has not decided on.
 *
 * @since 0.1.0 @category reading
 */
export const undecidedPaths = (mapping: MappingInput | null, element: unknown): ReadonlyArray<string> => {
  const used = mapping === null ? [] : usedPaths(mapping)
  return leaves(element).map((leaf) => leaf.path).filter((path) => !used.some((regex) => regex.test(path)))
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const DIGITS = /\d/g

// The last two names of a path: Jotform's phone is `q5_phoneNumber.full`.
const context = (leaf: Leaf): string => leaf.path.split(".").slice(-2).join(".")

const looksLike: { readonly [K in Templates.PersonField]: (leaf: Leaf) => boolean } = {
  email: (leaf) => Predicate.isString(leaf.value) && EMAIL.test(leaf.value.trim()),
  phone: (leaf) => /phone|mobile|cell|tel/i.test(context(leaf)) && (String(leaf.value).match(DIGITS)?.length ?? 0) >= 7,
  first_name: (leaf) => Predicate.isString(leaf.value) && /^(first|first.?name|given.?name|fname)$/i.test(leaf.key),
  last_name: (leaf) => Predicate.isString(leaf.value) && /^(last|last.?name|family.?name|surname|lname)$/i.test(leaf.key),
  name: (leaf) => Predicate.isString(leaf.value) && /^(full.?name|name|display.?name|contact.?name|your.?name)$/i.test(leaf.key),
  company: (leaf) => Predicate.isString(leaf.value) && /company|organi[sz]ation|business.?name|employer/i.test(leaf.key),
  website: (leaf) => Predicate.isString(leaf.value) && /website|homepage|web.?site|company.?url/i.test(leaf.key),
  role: (leaf) => Predicate.isString(leaf.value) && /^(role|job.?title|position|title)$/i.test(leaf.key)
}

// The shallowest candidate wins; among equals, the first in the notice.
const shallowest = (candidates: ReadonlyArray<Leaf>): Leaf | undefined =>
  candidates.reduce<Leaf | undefined>((best, leaf) => (best === undefined || leaf.depth < best.depth ? leaf : best), undefined)

const sharedNames = (a: string, b: string): number => {
  const left = a.split(".")
  const right = b.split(".")
  let shared = 0
  while (shared < left.length - 1 && shared < right.length - 1 && left[shared] === right[shared]) shared++
  return shared
}

// Where a person's fields live: the object holding the email, above any list it sits in (Clerk's emails are
// a list beside the names).
const homeOf = (email: Leaf): string => {
  const names = email.path.split(".").slice(0, -1)
  const list = names.findIndex((name) => name.endsWith("[]"))
  return (list === -1 ? names : names.slice(0, list)).join(".")
}

// A person's fields sit together: only candidates in the email's home count (Webflow's form `name` and PostHog's
// display `person.name` are not the person's name), the nearest to the email first, then the shallowest.
const nearest = (candidates: ReadonlyArray<Leaf>, anchor: Leaf | undefined): Leaf | undefined => {
  if (anchor === undefined) return shallowest(candidates)
  const home = homeOf(anchor)
  return candidates
    .filter((leaf) => home === "" || leaf.path.startsWith(`${home}.`))
    .reduce<Leaf | undefined>((best, leaf) => {
      if (best === undefined) return leaf
      const closer = sharedNames(leaf.path, anchor.path) - sharedNames(best.path, anchor.path)
      return closer > 0 || (closer === 0 && leaf.depth < best.depth) ? leaf : best
    }, undefined)
}

const asRules = (leaf: Leaf | undefined): Templates.Rules => (leaf === undefined ? [] : [leaf.path.replace(/\[\]/g, "[0]")])

// An email under a key that says so beats an email-shaped display name (PostHog's `person.name`).
const emailLeaf = (found: ReadonlyArray<Leaf>): Leaf | undefined => {
  const emails = found.filter(looksLike.email)
  return shallowest(emails.filter((leaf) => /e-?mail/i.test(leaf.key))) ?? shallowest(emails)
}

// A list of records at the top (or the body itself) holding emails: a batch of people.
const batchPath = (body: unknown): string | null => {
  const holdsPeople = (list: ReadonlyArray<unknown>) =>
    list.length > 0 && list.every(Predicate.isRecord) && leaves(list[0]).some(looksLike.email)
  if (Array.isArray(body)) return holdsPeople(body) ? "[]" : null
  if (!Predicate.isRecord(body)) return null
  for (const [key, value] of Object.entries(body)) {
    if (addressable(key) && Array.isArray(value) && holdsPeople(value)) return `${key}[]`
  }
  for (const [key, value] of Object.entries(body)) {
    if (!addressable(key) || !Predicate.isRecord(value)) continue
    for (const [inner, list] of Object.entries(value)) {
      if (addressable(inner) && Array.isArray(list) && holdsPeople(list)) return `${key}.${inner}[]`
    }
  }
  return null
}

/**
 * A first mapping for an example notice, by the names and shapes of its values: an email-shaped value, keys
 * that name a phone, a name, a company, a website or a role, the shallowest id and type. A top-level list of
 * records holding emails is proposed as a batch. The notice's own type is proposed as the one accepted event.
 *
 * @since 0.1.0 @category proposals
 */
export const propose = (example: unknown): MappingInput => {
  const items = batchPath(example)
  const first = items === null ? example : (elements({ event_type: [], accepted_events: [], notice_id: [], items, fields: {} }, example) ?? [])[0]
  const top = leaves(example)
  const inner = leaves(first)
  const typeLeaf = shallowest(
    top.filter((leaf) =>
      Predicate.isString(leaf.value) && /^(type|event|event.?type|event.?name|trigger.?event|trigger.?type|topic|action)$/i.test(leaf.key)
    )
  )
  const idTest = (leaf: Leaf) =>
    (Predicate.isString(leaf.value) || Predicate.isNumber(leaf.value)) &&
    /^(id|uuid|event.?id|submission.?id|message.?id|response.?id|notice.?id)$/i.test(leaf.key) &&
    !leaf.path.includes("[]")
  const fields: { -readonly [K in Templates.PersonField]?: Templates.Rules } = {}
  const email = emailLeaf(inner)
  for (const field of Templates.PersonField.literals) {
    const rules = asRules(field === "email" ? email : nearest(inner.filter((leaf) => leaf !== email && looksLike[field](leaf)), email))
    if (rules.length > 0) fields[field] = rules
  }
  return {
    event_type: typeLeaf === undefined ? [] : [typeLeaf.path],
    accepted_events: typeLeaf === undefined ? [] : [String(typeLeaf.value)],
    notice_id: asRules(shallowest((items === null ? top : inner).filter(idTest))),
    items,
    fields
  }
}
