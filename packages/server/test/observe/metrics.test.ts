/**
 * `GET /metrics` after known traffic: exact counter values and label sets, the token rule, the off
 * switch, and the backlog gauges read from the store.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { parseMetrics, type Sample, sampleValue, scrape } from '../helpers/metrics.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

/** The only labels a Sluice metric may carry: ids and fixed words, never user data or URLs. */
const ALLOWED_LABELS = new Set([
  'source',
  'destination',
  'reason',
  'outcome',
  'state',
  'kind',
  'le',
  'url_index',
])

async function webhookDestination(sluice: TestSluice, name: string, sourceId: string, url: string) {
  const created = await sluice.api('POST', '/api/v1/destinations', {
    name,
    type: 'webhooks',
    sourceIds: [sourceId],
    settings: { webhooks: [{ url }] },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return created.body.id as string
}

describe('GET /metrics after known traffic', () => {
  let sluice: TestSluice
  let okReceiver: Receiver
  let refusingReceiver: Receiver
  let sourceId: string
  let delivered: string
  let refused: string
  let samples: Sample[]

  before(async () => {
    sluice = await startTestSluice()
    okReceiver = await startReceiver()
    refusingReceiver = await startReceiver((_req, res) => {
      res.statusCode = 400 // final: failed, not retried
      res.end('no')
    })
    const source = await sluice.createSource('Metrics source')
    sourceId = source.id
    delivered = await webhookDestination(sluice, 'Accepting', source.id, `${okReceiver.url}/hook`)
    refused = await webhookDestination(sluice, 'Refusing', source.id, `${refusingReceiver.url}/hook`)
    const suppression = await sluice.api('POST', '/api/v1/regulations', {
      regulationType: 'SUPPRESS_ONLY',
      subjectType: 'USER_ID',
      subjectIds: ['forgotten'],
    })
    assert.equal(suppression.status, 201, JSON.stringify(suppression.body))

    const batch = {
      batch: [
        trackCall({ messageId: 'm-1' }),
        trackCall({ messageId: 'm-2' }),
        trackCall({ messageId: 'm-3' }),
        { type: 'track', userId: 'u' }, // no event: invalid
        trackCall({ messageId: 'm-big', properties: { blob: 'x'.repeat(40_000) } }), // over 32 KB
        trackCall({ messageId: 's-1', userId: 'forgotten' }), // suppressed: acknowledged, dropped
        trackCall({ messageId: 's-2', userId: 'forgotten' }),
      ],
    }
    const first = await send(sluice.url, '/v1/batch', batch, { writeKey: source.writeKey })
    assert.equal(first.status, 200)
    assert.equal(first.body.accepted, 5) // the suppressed calls count as accepted in the answer
    // The same batch again: the three valid calls are duplicates now, the two others rejected again.
    const second = await send(sluice.url, '/v1/batch', batch, { writeKey: source.writeKey })
    assert.equal(second.status, 200)
    await until(
      'every delivery to be final',
      () => Promise.all([sluice.store.deliveryBacklog(), sluice.store.countDeliveries()]),
      ([backlog, total]) => backlog.length === 0 && total === 6,
    )
    // Outcomes are counted when decided and committed just after: wait for both commits to be observed.
    samples = await until(
      'both outcome commits to be observed',
      () => scrape(sluice.url, sluice.adminToken),
      (s) => sampleValue(s, 'sluice_store_commit_group_size_sum', { kind: 'outcomes' }) === 6,
    )
  })

  after(async () => {
    await sluice.destroy()
    await okReceiver.close()
    await refusingReceiver.close()
  })

  test('calls per source: accepted, deduplicated, rejected by reason, suppressed', () => {
    const source = { source: sourceId }
    assert.equal(sampleValue(samples, 'sluice_calls_accepted_total', source), 3)
    assert.equal(sampleValue(samples, 'sluice_calls_deduplicated_total', source), 3)
    // Suppressed calls are dropped before the dedupe check: both batches count them.
    assert.equal(sampleValue(samples, 'sluice_calls_suppressed_total', source), 4)
    assert.equal(
      sampleValue(samples, 'sluice_calls_rejected_total', { ...source, reason: 'invalid_message' }),
      2,
    )
    assert.equal(
      sampleValue(samples, 'sluice_calls_rejected_total', { ...source, reason: 'message_too_large' }),
      2,
    )
    assert.equal(sampleValue(samples, 'sluice_calls_rejected_total', { ...source, reason: 'overloaded' }), 0)
  })

  test('deliveries by destination and outcome, attempt latency per destination', () => {
    const outcomes = (destination: string) =>
      Object.fromEntries(
        samples
          .filter((s) => s.name === 'sluice_deliveries_total' && s.labels.destination === destination)
          .map((s) => [s.labels.outcome, s.value]),
      )
    assert.deepEqual(outcomes(delivered), { delivered: 3, retrying: 0, failed: 0, dead_lettered: 0 })
    assert.deepEqual(outcomes(refused), { delivered: 0, retrying: 0, failed: 3, dead_lettered: 0 })
    for (const destination of [delivered, refused]) {
      const labels = { destination }
      assert.equal(sampleValue(samples, 'sluice_delivery_attempt_duration_seconds_count', labels), 3)
      assert.equal(
        sampleValue(samples, 'sluice_delivery_attempt_duration_seconds_bucket', { ...labels, le: '+Inf' }),
        3,
      )
      assert.ok(sampleValue(samples, 'sluice_delivery_attempt_duration_seconds_sum', labels)! > 0)
    }
    assert.equal(okReceiver.requests.length, 3)
  })

  test('store commits: two ingest commits of three calls each, six outcomes', () => {
    assert.equal(sampleValue(samples, 'sluice_store_commit_duration_seconds_count', { kind: 'ingest' }), 2)
    assert.equal(sampleValue(samples, 'sluice_store_commit_group_size_count', { kind: 'ingest' }), 2)
    assert.equal(sampleValue(samples, 'sluice_store_commit_group_size_sum', { kind: 'ingest' }), 6)
    assert.equal(sampleValue(samples, 'sluice_store_commit_group_size_sum', { kind: 'outcomes' }), 6)
    assert.equal(sampleValue(samples, 'sluice_ingest_queue_bytes'), 0)
    assert.equal(sampleValue(samples, 'sluice_ingest_queue_messages'), 0)
  })

  test('nothing waits: no backlog series', () => {
    assert.equal(samples.filter((s) => s.name === 'sluice_delivery_backlog').length, 0)
  })

  test('the process metrics: event-loop lag, heap, RSS', () => {
    assert.ok(sampleValue(samples, 'nodejs_eventloop_lag_seconds')! >= 0)
    for (const name of ['nodejs_heap_size_used_bytes', 'process_resident_memory_bytes']) {
      assert.ok((sampleValue(samples, name) ?? 0) > 0, `${name} is served`)
    }
  })

  test('label sets are bounded: ids and fixed words only, never URLs or user data', () => {
    const sluiceSamples = samples.filter((s) => s.name.startsWith('sluice_'))
    assert.ok(sluiceSamples.length > 20)
    for (const sample of sluiceSamples) {
      for (const [label, value] of Object.entries(sample.labels)) {
        assert.ok(ALLOWED_LABELS.has(label), `${sample.name} has label ${label}`)
        assert.doesNotMatch(value, /:\/\/|user-1|m-1/, `${sample.name}{${label}="${value}"}`)
      }
    }
    const ids = new Set(sluiceSamples.flatMap((s) => [s.labels.source, s.labels.destination]))
    ids.delete(undefined)
    assert.deepEqual([...ids].sort(), [delivered, refused, sourceId].sort())
  })

  test('the token: 401 without one, with a wrong one; the admin token is accepted', async () => {
    const none = await fetch(`${sluice.url}/metrics`)
    assert.equal(none.status, 401)
    assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/)
    assert.match(
      ((await none.json()) as { error: { message: string } }).error.message,
      /Authorization: Bearer/,
    )
    const wrong = await fetch(`${sluice.url}/metrics`, { headers: { authorization: 'Bearer nope' } })
    assert.equal(wrong.status, 401)
    const right = await fetch(`${sluice.url}/metrics`, {
      headers: { authorization: `Bearer ${sluice.adminToken}` },
    })
    assert.equal(right.status, 200)
    assert.match(right.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  })
})

describe('GET /metrics settings and backlog', () => {
  test('SLUICE_METRICS_PUBLIC=true serves it without a token', async () => {
    const sluice = await startTestSluice({ metricsPublic: true })
    try {
      const samples = await scrape(sluice.url)
      assert.ok(sampleValue(samples, 'process_resident_memory_bytes')! > 0)
    } finally {
      await sluice.destroy()
    }
  })

  test('SLUICE_METRICS=false: no /metrics at all', async () => {
    const sluice = await startTestSluice({ metrics: false })
    try {
      const response = await fetch(`${sluice.url}/metrics`, {
        headers: { authorization: `Bearer ${sluice.adminToken}` },
      })
      assert.equal(response.status, 404)
      await response.arrayBuffer()
      assert.equal(sluice.sluice.metrics.enabled, false)
    } finally {
      await sluice.destroy()
    }
  })

  test('backlog gauges come from the store: pending per destination, and how long the oldest has been due', async () => {
    // An api-only process delivers nothing, so what it accepts stays pending.
    const sluice = await startTestSluice({ role: 'api' })
    try {
      const source = await sluice.createSource()
      const destination = await webhookDestination(sluice, 'Waiting', source.id, 'https://example.com/hook')
      const calls = { batch: [trackCall(), trackCall(), trackCall(), trackCall()] }
      assert.equal((await send(sluice.url, '/v1/batch', calls, { writeKey: source.writeKey })).status, 200)
      const samples = await until(
        'the oldest pending delivery to have been due for a while',
        () => scrape(sluice.url, sluice.adminToken),
        (s) => (sampleValue(s, 'sluice_delivery_oldest_due_age_seconds', { destination }) ?? 0) > 0,
      )
      assert.equal(sampleValue(samples, 'sluice_delivery_backlog', { destination, state: 'pending' }), 4)
      assert.equal(sampleValue(samples, 'sluice_delivery_backlog', { destination, state: 'retrying' }), 0)
    } finally {
      await sluice.destroy()
    }
  })
})

test('parseMetrics reads labels with escapes', () => {
  const [sample] = parseMetrics('a_total{x="q\\"uote",y="b"} 2\n')
  assert.deepEqual(sample, { name: 'a_total', labels: { x: 'q"uote', y: 'b' }, value: 2 })
})
