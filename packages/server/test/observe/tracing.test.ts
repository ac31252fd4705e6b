/**
 * OpenTelemetry: a real OTLP/HTTP receiver (a local HTTP server decoding the JSON export) gets the
 * spans of an ingest request, its commit and the delivery attempts, linked parent to child, with the
 * message ids as attributes. Without an endpoint, neither the SDK nor the exporter is even loaded.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { startReceiver } from '../deliver/receivers.ts'
import { startTestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: { key: string; value: Record<string, unknown> }[]
}

/** An attribute's plain value (OTLP JSON wraps each value in its type: stringValue, intValue, arrayValue...). */
function attribute(span: OtlpSpan, key: string): unknown {
  const found = span.attributes.find((a) => a.key === key)?.value
  if (!found) return undefined
  if ('arrayValue' in found) {
    return (found.arrayValue as { values: { stringValue: string }[] }).values.map((v) => v.stringValue)
  }
  const [value] = Object.values(found)
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
}

test('spans for ingest → commit → delivery attempt reach an OTLP receiver, linked parent to child', async () => {
  const exports: { contentType: string | undefined; body: any }[] = []
  const collector = await startReceiver((req, res, body) => {
    exports.push({ contentType: req.headers['content-type'], body: JSON.parse(body.toString()) })
    res.setHeader('content-type', 'application/json')
    res.end('{}')
  })
  const hooks = await startReceiver()
  const sluice = await startTestSluice({ otlpTracesUrl: `${collector.url}/v1/traces` })
  try {
    const source = await sluice.createSource()
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Traced',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${hooks.url}/hook` }] },
    })
    assert.equal(created.status, 201)
    const calls = { batch: [trackCall({ messageId: 'trace-a' }), trackCall({ messageId: 'trace-b' })] }
    assert.equal((await send(sluice.url, '/v1/batch', calls, { writeKey: source.writeKey })).status, 200)
    await until(
      'both deliveries',
      () => hooks.requests.length,
      (n) => n === 2,
    )
    await until(
      'both outcomes recorded',
      () => sluice.store.deliveryBacklog(),
      (b) => b.length === 0,
    )
  } finally {
    await sluice.destroy() // shutdown exports what is buffered
    await hooks.close()
  }
  await collector.close()

  assert.ok(exports.length > 0, 'the collector received an export')
  assert.equal(collector.requests[0]!.url, '/v1/traces')
  assert.match(exports[0]!.contentType ?? '', /^application\/json/)
  const resourceSpans = exports.flatMap((e) => e.body.resourceSpans)
  const service = resourceSpans[0].resource.attributes.find((a: any) => a.key === 'service.name')
  assert.equal(service.value.stringValue, 'sluice')
  const spans: OtlpSpan[] = resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans))

  const ingest = spans.filter((s) => s.name === 'sluice.ingest')
  const commits = spans.filter((s) => s.name === 'sluice.commit')
  const deliveries = spans.filter((s) => s.name === 'sluice.deliver')
  assert.equal(ingest.length, 1)
  assert.equal(commits.length, 1)
  assert.equal(deliveries.length, 2)
  const [request] = ingest
  const [commit] = commits
  assert.ok(!request!.parentSpanId, 'the request span is a root')
  assert.equal(attribute(request!, 'sluice.calls'), 2)
  assert.equal(attribute(request!, 'sluice.accepted'), 2)
  assert.equal(commit!.traceId, request!.traceId)
  assert.equal(commit!.parentSpanId, request!.spanId)
  assert.deepEqual(attribute(commit!, 'sluice.message_ids'), ['trace-a', 'trace-b'])
  assert.deepEqual(deliveries.map((d) => attribute(d, 'sluice.message_id')).sort(), ['trace-a', 'trace-b'])
  for (const delivery of deliveries) {
    assert.equal(delivery.traceId, request!.traceId)
    assert.equal(delivery.parentSpanId, commit!.spanId)
    assert.equal(attribute(delivery, 'sluice.outcome'), 'delivered')
    assert.equal(attribute(delivery, 'sluice.attempt'), 1)
  }
})

test('without an OTLP endpoint the OpenTelemetry SDK and exporter are not loaded', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(import.meta.dirname, 'otel-free-probe.ts'),
  ])
  const { status, resolved } = JSON.parse(stdout) as { status: number; resolved: string[] }
  assert.equal(status, 200)
  // prom-client looks for the (tiny, dependency-free) API package for exemplars; nothing else may load.
  const sdk = resolved.filter((specifier) => !specifier.startsWith('@opentelemetry/api from '))
  assert.deepEqual(sdk, [])
  assert.ok(
    resolved.every((specifier) => specifier.includes('/prom-client/')),
    resolved.join('\n'),
  )
})
