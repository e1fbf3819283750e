/**
 * RFC 3986 URI-reference and URI checks for `source` and `dataschema`. Not API: `CloudEvent` is the public
 * face. The reference is split with the regular expression of RFC 3986 appendix B, then each component is
 * held to its own character set.
 */

// Appendix B: scheme, authority, path, query, fragment.
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s

const PCT = "%[0-9A-Fa-f]{2}"
const UNRESERVED = "A-Za-z0-9\\-._~"
const SUB_DELIMS = "!$&'()*+,;="
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PCT})`

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/
const USERINFO = `(?:[${UNRESERVED}${SUB_DELIMS}:]|${PCT})*`
const IP_LITERAL = `\\[[${UNRESERVED}${SUB_DELIMS}:]+\\]`
const REG_NAME = `(?:[${UNRESERVED}${SUB_DELIMS}]|${PCT})*`
const AUTHORITY = new RegExp(`^(?:${USERINFO}@)?(?:${IP_LITERAL}|${REG_NAME})(?::[0-9]*)?$`)
const PATH = new RegExp(`^(?:${PCHAR}|/)*$`)
const QUERY_OR_FRAGMENT = new RegExp(`^(?:${PCHAR}|[/?])*$`)

const parts = (text: string) => {
  const match = PARTS.exec(text)
  if (match === null) return undefined
  const [, scheme, authority, path = "", query, fragment] = match
  const valid =
    (scheme === undefined || SCHEME.test(scheme)) &&
    (authority === undefined || AUTHORITY.test(authority)) &&
    PATH.test(path) &&
    (query === undefined || QUERY_OR_FRAGMENT.test(query)) &&
    (fragment === undefined || QUERY_OR_FRAGMENT.test(fragment))
  return valid ? { scheme } : undefined
}

/**
 * Whether `text` is a non-empty RFC 3986 URI-reference (absolute like `https://x/y` or `urn:a:b`, or relative
 * like `/sensors/x` or `//host/path`). A colon in the first segment of a relative path reads as a scheme and
 * must then be a valid one, as section 4.2 requires.
 */
export const isUriReference = (text: string): boolean => text.length > 0 && parts(text) !== undefined

/** Whether `text` is an RFC 3986 URI: a URI-reference with a scheme. */
export const isUri = (text: string): boolean => text.length > 0 && parts(text)?.scheme !== undefined
