/** Minimal pages: no script, no external asset, every value escaped. */
export const escape = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

export const page = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escape(title)}</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
input[type=email], input[type=password], select { width: 100%; padding: 0.5rem; font: inherit; box-sizing: border-box; }
button { margin-top: 1.25rem; padding: 0.5rem 1.25rem; font: inherit; cursor: pointer; }
.error { color: #a40000; background: #fdecec; padding: 0.5rem 0.75rem; border-radius: 4px; }
.muted { color: #555; font-size: 0.9rem; }
fieldset { border: 1px solid #ccc; border-radius: 4px; margin-top: 1rem; }
</style>
</head>
<body>
${body}
</body>
</html>
`

/** Security headers every page carries: no framing (clickjacking), no inline script, no caching of personal pages. */
export const pageHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "same-origin"
}

/** The cookies of a `cookie` header. */
export const cookies = (header: string | undefined): ReadonlyMap<string, string> => {
  const found = new Map<string, string>()
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=")
    if (at <= 0) continue
    const name = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (!found.has(name)) found.set(name, value)
  }
  return found
}

/** A return path that stays on this server: a path from the root, never `//host` or a full URL. */
export const safeReturn = (value: string | null | undefined, fallback: string): string =>
  value !== null && value !== undefined && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) ? value : fallback
