/**
 * OpenTelemetry tracing, exported over OTLP/HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. Otherwise tracing is off and free: the SDK is not even
 * loaded (it is imported dynamically below), and the hot paths call the no-op `NO_TRACING`.
 *
 * Spans, each with the message id(s) as attributes:
 *   sluice.ingest     one Tracking API request's calls (attributes: source, calls)
 *   └ sluice.commit   their wait for the group commit that makes them durable (message ids)
 *     └ sluice.deliver one delivery attempt (message id, destination, outcome). It is the commit's
 *                      child when this process committed the call recently; a delivery made by another
 *                      process, or much later, starts its own trace and is found by its message id.
 */
import type { Context, Span, Tracer } from '@opentelemetry/api'
import type { ClaimedDelivery } from '../domain/delivery-store.ts'
import type { AcceptedMessage } from '../domain/message-store.ts'

type Attributes = Record<string, string | number | boolean | string[]>

export interface TraceSpan {
  /** Ends the span, adding `attributes`. */
  end(attributes?: Attributes): void
  /** Ends the span as failed with `error`. */
  fail(error: unknown): void
}

export interface Tracing {
  readonly enabled: boolean
  startIngest(sourceId: string, calls: number): TraceSpan
  startCommit(parent: TraceSpan, messages: readonly AcceptedMessage[]): TraceSpan
  startDelivery(destinationId: string, delivery: ClaimedDelivery): TraceSpan
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>
}

const NO_OP_SPAN: TraceSpan = { end() {}, fail() {} }

export const NO_TRACING: Tracing = {
  enabled: false,
  startIngest: () => NO_OP_SPAN,
  startCommit: () => NO_OP_SPAN,
  startDelivery: () => NO_OP_SPAN,
  shutdown: async () => {},
}

/** Commits remembered for parenting their deliveries in this process; older ones start their own trace. */
const REMEMBERED_COMMITS = 10_000

/** Where spans go: the OTLP/HTTP traces URL, per the standard variables; undefined when tracing is off. */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined
}

/** Tracing to `tracesUrl`, or none when it is undefined (then nothing of OpenTelemetry is loaded). */
export async function createTracing(tracesUrl: string | undefined): Promise<Tracing> {
  if (!tracesUrl) return NO_TRACING
  const [api, sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ])
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'sluice' }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl }) })],
  })
  const tracer: Tracer = provider.getTracer('sluice')
  const commitsByMessageId = new Map<string, Context>()
  const contextOf = new WeakMap<TraceSpan, Context>()

  const wrap = (span: Span): TraceSpan => {
    const handle: TraceSpan = {
      end(attributes) {
        if (attributes) span.setAttributes(attributes)
        span.end()
      },
      fail(error) {
        span.recordException(error instanceof Error ? error : String(error))
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message })
        span.end()
      },
    }
    contextOf.set(handle, api.trace.setSpan(api.ROOT_CONTEXT, span))
    return handle
  }

  return {
    enabled: true,
    startIngest(sourceId, calls) {
      return wrap(
        tracer.startSpan('sluice.ingest', {
          kind: api.SpanKind.SERVER,
          attributes: { 'sluice.source_id': sourceId, 'sluice.calls': calls },
        }),
      )
    },
    startCommit(parent, messages) {
      const messageIds = messages.map((message) => message.messageId)
      const span = wrap(
        tracer.startSpan(
          'sluice.commit',
          { attributes: { 'sluice.message_ids': messageIds } },
          contextOf.get(parent) ?? api.ROOT_CONTEXT,
        ),
      )
      const context = contextOf.get(span)!
      for (const messageId of messageIds) {
        commitsByMessageId.delete(messageId)
        commitsByMessageId.set(messageId, context)
      }
      // A Map iterates in insertion order: the first keys are the oldest.
      for (const oldest of commitsByMessageId.keys()) {
        if (commitsByMessageId.size <= REMEMBERED_COMMITS) break
        commitsByMessageId.delete(oldest)
      }
      return span
    },
    startDelivery(destinationId, delivery) {
      const messageId = String(delivery.payload.messageId ?? '')
      return wrap(
        tracer.startSpan(
          'sluice.deliver',
          {
            kind: api.SpanKind.CLIENT,
            attributes: {
              'sluice.message_id': messageId,
              'sluice.destination_id': destinationId,
              'sluice.delivery_id': delivery.id,
              'sluice.attempt': delivery.attemptCount + 1,
            },
          },
          commitsByMessageId.get(messageId) ?? api.ROOT_CONTEXT,
        ),
      )
    },
    shutdown: () => provider.shutdown(),
  }
}
