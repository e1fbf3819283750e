/**
 * Public read-only links to topics: `GET /api/v1/s/<token>` renders the topic as an HTML page and
 * `GET /api/v1/s/<token>/raw` returns its markdown, with no authentication. An unknown, revoked or archived
 * link answers the same bare 404, so a token cannot be probed; tokens are unguessable and only their hashes are
 * stored (`Topics.share`).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as RequestId from "@service/http/RequestId"
import * as SharePage from "@service/topics/SharePage"
import { Topics } from "@service/topics/Topics"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const notFound = HttpServerResponse.text("Not found\n", { status: 404, headers: SharePage.headers })

/** @since 0.1.0 @category layers */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const topics = yield* Topics
    const page = (format: "html" | "raw") =>
      Effect.gen(function*() {
        const token = (yield* HttpRouter.params)["token"] ?? ""
        const found = yield* topics.sharedTopic(token)
        if (Option.isNone(found)) return notFound
        return format === "html"
          ? HttpServerResponse.html(SharePage.html(found.value, { raw: `${encodeURIComponent(token)}/raw` })).pipe(
            HttpServerResponse.setHeaders(SharePage.headers)
          )
          : HttpServerResponse.text(SharePage.raw(found.value), {
            contentType: "text/markdown; charset=utf-8",
            headers: SharePage.headers
          })
      })
    yield* router.get("/api/v1/s/:token", RequestId.withRequestId(page("html")))
    yield* router.get("/api/v1/s/:token/raw", RequestId.withRequestId(page("raw")))
  })
)
