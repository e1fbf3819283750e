/**
 * Public read-only links to topics, declared with the topics bundle: `GET /api/v1/s/<token>` renders the topic as
 * an HTML page and `GET /api/v1/s/<token>/raw` returns its markdown, with no authentication. An unknown, revoked
 * or archived link answers the same bare 404, so a token cannot be probed; tokens are unguessable and only their
 * hashes are stored (`Topics.share`). Every answer carries a strict Content-Security-Policy (`SharePage.headers`).
 *
 * @since 0.1.0
 */
import * as Mount from "@service/core/Mount"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SharePage from "./SharePage.js"
import { sharePagePath, Topics } from "./Topics.js"

const notFound = Mount.text("Not found\n", "text/plain; charset=utf-8", 404, SharePage.headers)

const page = (format: "html" | "raw") => (request: Mount.Request) =>
  Effect.gen(function*() {
    const token = request.params["token"] ?? ""
    const found = yield* (yield* Topics).sharedTopic(token)
    if (Option.isNone(found)) return notFound
    return format === "html"
      ? Mount.text(SharePage.html(found.value, { raw: `${encodeURIComponent(token)}/raw` }), "text/html; charset=utf-8", 200, SharePage.headers)
      : Mount.text(SharePage.raw(found.value), "text/markdown; charset=utf-8", 200, SharePage.headers)
  })

const route = (format: "html" | "raw", described: { readonly name: string; readonly path: `/${string}`; readonly summary: string; readonly as: string; readonly contentType: string }) =>
  Mount.make({
    name: described.name,
    method: "GET",
    path: described.path,
    summary: described.summary,
    description:
      `The topic a share link names, ${described.as}. Public: no credential. Revoked, archived or unknown links answer the same 404.`,
    tag: "Shared topics",
    params: { token: "The share link's token (shr_...), as `topics_share` returned it." },
    answers: [
      { status: 200, description: `The topic, ${described.as}.`, contentType: described.contentType },
      { status: 404, description: "No active share link with that token.", contentType: "text/plain" }
    ],
    public: true,
    handle: page(format)
  })

/** @since 0.1.0 @category routes */
export const html = route("html", {
  name: "topics_shared_page",
  path: sharePagePath(":token"),
  summary: "A shared topic, as a page",
  as: "rendered as HTML with its trust signal",
  contentType: "text/html"
})

/** @since 0.1.0 @category routes */
export const raw = route("raw", {
  name: "topics_shared_raw",
  path: `${sharePagePath(":token")}/raw`,
  summary: "A shared topic, as markdown",
  as: "as its markdown source",
  contentType: "text/markdown"
})

/** @since 0.1.0 @category routes */
export const mounts = [html, raw] as const
