/**
 * The public read-only page of a shared topic: a small, accessible HTML document (a landmark, a heading, the
 * trust signal in words, the tags, the body) and the same topic as markdown.
 *
 * The body is rendered with `markdown-it` with raw HTML off: a `<script>` or an `onerror=` in a topic body is
 * shown as text, and `javascript:` links are not made links (markdown-it's own link check). The route also sends a
 * Content-Security-Policy that allows no script at all ({@link headers}), so nothing a body contains can run.
 *
 * @since 0.1.0
 */
import MarkdownIt from "markdown-it"
import type { TopicView } from "./Topics.js"

const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false })

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

const trustText: Record<TopicView["trust"], string> = {
  reviewed: "Reviewed knowledge: an owner or admin approved it.",
  proposed: "Proposed: waiting for review, not yet knowledge.",
  draft: "Draft: a note, not reviewed."
}

/**
 * Response headers of the public page: no script, no framing, no referrer, never cached (a revoked link must
 * stop working at once) and not indexed.
 *
 * @since 0.1.0 @category rendering
 */
export const headers: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-robots-tag": "noindex"
}

const style = `body{font:16px/1.6 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
header p{margin:.25rem 0;color:#444}.trust{font-weight:600}ul.tags{list-style:none;padding:0;display:flex;gap:.5rem;flex-wrap:wrap}
ul.tags li{background:#eef;border-radius:.25rem;padding:0 .4rem}pre{overflow:auto;background:#f5f5f5;padding:.75rem}
a{color:#0645ad}footer{margin-top:3rem;color:#555;font-size:.875rem}`

/**
 * The HTML page of a shared topic.
 *
 * @since 0.1.0 @category rendering
 */
export const html = (topic: TopicView, links: { readonly raw: string }): string => {
  const tags = topic.tags.length === 0
    ? ""
    : `<ul class="tags" aria-label="Tags">${topic.tags.map((tag) => `<li>${escape(tag)}</li>`).join("")}</ul>`
  return `<!doctype html>
<html lang="und">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(topic.title)}</title>
<style>${style}</style>
</head>
<body>
<main>
<article>
<header>
<h1>${escape(topic.title)}</h1>
<p class="trust">${escape(trustText[topic.trust])}</p>
<p>Updated <time datetime="${escape(topic.updated_at)}">${escape(topic.updated_at.slice(0, 10))}</time></p>
${tags}
</header>
<div class="body">
${markdown.render(topic.body)}
</div>
</article>
</main>
<footer><p>A read-only link to one topic. <a href="${escape(links.raw)}">Markdown</a></p></footer>
</body>
</html>
`
}

/**
 * The topic as markdown: its title as a heading, then its body as written.
 *
 * @since 0.1.0 @category rendering
 */
export const raw = (topic: TopicView): string => `# ${topic.title}\n\n${topic.body}\n`
