/**
 * What `/ready` checks on this runtime: the database answers, every migration is applied, a corpus
 * publication is active. While the demo corpus loads in the background, the publication check says how far
 * it got.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as App from "@service/app/App"
import * as Health from "@service/http/Health"
import { Corpus } from "@service/market-warehouse/Corpus"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/**
 * How the background corpus load is doing, in words (none when nothing is loading).
 *
 * @since 0.1.0 @category tags
 */
export class CorpusProgress extends Context.Tag("@service/example-server/CorpusProgress")<
  CorpusProgress,
  Ref.Ref<Option.Option<string>>
>() {
  static readonly layer = Layer.effect(CorpusProgress, Ref.make(Option.none<string>()))
}

/**
 * The three checks over the running services.
 *
 * @since 0.1.0 @category constructors
 */
export const checks: Effect.Effect<
  ReadonlyArray<Health.Check>,
  never,
  SqlClient.SqlClient | Database.DatabaseInfo | Corpus
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const info = yield* Database.DatabaseInfo
  const corpus = yield* Corpus
  const progress = yield* Effect.serviceOption(CorpusProgress)
  const database: Health.Check = {
    name: "database",
    run: Effect.as(sql`SELECT 1`, { ready: true, detail: `answering (${info.description})` }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }
  const migrations: Health.Check = {
    name: "migrations",
    run: Effect.map(Migrations.pending(App.migrations), (pending) => ({
      ready: pending.length === 0,
      detail: pending.length === 0 ? "all applied" : `not applied: ${pending.join(", ")}`
    })).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }
  const publication: Health.Check = {
    name: "publication",
    run: Effect.gen(function*() {
      const active = yield* corpus.active
      if (Option.isSome(active)) {
        return { ready: true, detail: `${active.value.snapshotId} published at ${active.value.publishedAt.toISOString()}` }
      }
      const loading = Option.isSome(progress) ? yield* Ref.get(progress.value) : Option.none<string>()
      return {
        ready: false,
        detail: Option.getOrElse(loading, () => "no corpus publication is active: load and publish one (service corpus load ... --publish)")
      }
    })
  }
  return [database, migrations, publication] as const
})

/**
 * {@link Health.Readiness} from {@link checks}.
 *
 * @since 0.1.0 @category layers
 */
export const layer = Layer.effect(Health.Readiness, Effect.map(checks, Health.makeReadiness))
