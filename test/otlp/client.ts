import { randomBytes } from 'node:crypto'
import { type Attributes, context, type Span, trace } from '@opentelemetry/api'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  BatchSpanProcessor,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace'

export interface OtelApp {
  /** Starts a span, as a child of `parent` when given. */
  span(name: string, attributes: Attributes, parent?: Span, startTime?: Date): Span
  /** Exports everything ended so far; throws unless every export succeeded. */
  flush(): Promise<void>
  close(): Promise<void>
}

/**
 * An application instrumented with the real OpenTelemetry JS SDK, exporting with the real OTLP
 * exporter (protobuf or JSON) to `url`. `batch` puts every span ended before a flush into one
 * export (BatchSpanProcessor); otherwise each span is exported as it ends (SimpleSpanProcessor).
 */
export function otelApp(options: {
  url: string
  headers: Record<string, string>
  encoding: 'protobuf' | 'json'
  batch?: boolean
  compression?: 'gzip' | 'none'
  resource?: Attributes
}): OtelApp {
  const config = {
    url: options.url,
    headers: options.headers,
    ...(options.compression ? { compression: options.compression } : {}),
  } as ConstructorParameters<typeof ProtoExporter>[0]
  const inner: SpanExporter =
    options.encoding === 'protobuf' ? new ProtoExporter(config) : new JsonExporter(config)
  const failures: string[] = []
  // The exporter's verdict on each export, which the span processors only log.
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        // ExportResultCode.SUCCESS is 0 (@opentelemetry/core).
        if (result.code !== 0) failures.push(String(result.error?.message ?? result.error))
        done(result)
      })
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  }
  const processor = options.batch
    ? new BatchSpanProcessor({ exporter, maxExportBatchSize: 512, scheduledDelayMillis: 60_000 })
    : new SimpleSpanProcessor({ exporter })
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'otlp-test-app', ...options.resource }),
    spanProcessors: [processor],
  })
  const tracer = provider.getTracer('tally-otlp-test')
  return {
    span(name, attributes, parent, startTime) {
      const ctx = parent ? trace.setSpan(context.active(), parent) : context.active()
      return tracer.startSpan(name, { attributes, ...(startTime ? { startTime } : {}) }, ctx)
    },
    async flush() {
      await provider.forceFlush()
      if (failures.length > 0) throw new Error(`OTLP export failed: ${failures.splice(0).join('; ')}`)
    },
    close: () => provider.shutdown(),
  }
}

type JsonAttrs = Record<string, string | number>

/** One span as OTLP/JSON writes it: hex ids, nanosecond times as text, typed attribute values. */
export function jsonSpan(s: {
  traceId?: string
  spanId?: string
  attributes: JsonAttrs
  startMs?: number
  name?: string
}) {
  const start = BigInt(s.startMs ?? Date.now() - 1000) * 1_000_000n
  return {
    traceId: s.traceId ?? randomBytes(16).toString('hex'),
    spanId: s.spanId ?? randomBytes(8).toString('hex'),
    name: s.name ?? 'chat',
    kind: 3,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 250_000_000n),
    attributes: Object.entries(s.attributes).map(([key, v]) => ({
      key,
      value: typeof v === 'number' ? { intValue: v } : { stringValue: v },
    })),
    status: { code: 1 },
  }
}

export const jsonExport = (spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans }] }],
})
