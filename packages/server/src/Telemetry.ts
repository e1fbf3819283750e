/**
 * OpenTelemetry export of traces, metrics and logs over OTLP/HTTP, configured by the standard variables and
 * off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set:
 *
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: base URL of the collector (`/v1/traces`, `/v1/metrics`, `/v1/logs` are appended)
 * - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (default) or `http/json`
 * - `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2` sent with every export (kept redacted)
 * - `OTEL_SERVICE_NAME`: the resource's service name (default `service`)
 *
 * Spans carry `request.id` (see `@service/http/RequestId`), so a trace can be found from a response header.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

const nonBlank = (name: string) =>
  Config.string(name).pipe(
    Config.map((value) => value.trim()),
    Config.option,
    Config.map(Option.filter((value) => value.length > 0))
  )

/** @since 0.1.0 @category config */
export const config = Config.all({
  endpoint: nonBlank("OTEL_EXPORTER_OTLP_ENDPOINT"),
  protocol: Config.literal("http/protobuf", "http/json")("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
    Config.withDefault("http/protobuf" as const),
    Config.withDescription("OTLP protocol: http/protobuf or http/json (gRPC is not supported)")
  ),
  headers: Config.option(Config.redacted("OTEL_EXPORTER_OTLP_HEADERS")),
  serviceName: nonBlank("OTEL_SERVICE_NAME").pipe(Config.map(Option.getOrElse(() => "service")))
})

/**
 * Parses `OTEL_EXPORTER_OTLP_HEADERS` (`k=v` pairs separated by commas, values percent-encoded).
 *
 * @since 0.1.0 @category parsing
 */
export const parseHeaders = (value: string): Record<string, string> =>
  Object.fromEntries(
    value.split(",").flatMap((pair) => {
      const index = pair.indexOf("=")
      if (index <= 0) return []
      const key = pair.slice(0, index).trim()
      const raw = pair.slice(index + 1).trim()
      try {
        return [[key, decodeURIComponent(raw)]]
      } catch {
        return [[key, raw]]
      }
    })
  )

/**
 * The exporter when configured. Without one, tracing is switched off: spans would only be built and dropped, and
 * making them (a span object, its attributes, a captured stack per call) was a measurable share of a read's CPU
 * (decision 0083).
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const settings = yield* config
    if (Option.isNone(settings.endpoint)) return Layer.setTracerEnabled(false)
    const options = {
      baseUrl: settings.endpoint.value,
      resource: { serviceName: settings.serviceName, serviceVersion: "0.1.0" },
      headers: Option.match(settings.headers, { onNone: () => ({}), onSome: (h) => parseHeaders(Redacted.value(h)) })
    }
    yield* Effect.logInfo(`Exporting traces, metrics and logs to ${settings.endpoint.value} (${settings.protocol})`)
    // Loaded only when exporting, so a start without telemetry does not pay for it.
    const Otlp = yield* Effect.promise(() => import("@effect/opentelemetry/Otlp"))
    const exporter = settings.protocol === "http/json" ? Otlp.layerJson(options) : Otlp.layerProtobuf(options)
    return exporter.pipe(Layer.provide(FetchHttpClient.layer))
  })
)
