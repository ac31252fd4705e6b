/**
 * Overload: while the store does not commit (a store whose ingest waits on a gate the test opens),
 * calls pile up in memory waiting for their commit. Past the queue limit the Tracking API answers
 * 503 with Retry-After at once, so memory stays bounded however hard it is flooded; when the store
 * catches up, every admitted request is answered 200 with its calls committed.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sampleValue, scrape } from '../helpers/metrics.ts'
import { startTestSluice } from '../helpers/sluice.ts'
import { trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

const QUEUE_LIMIT = 1024 * 1024
const CALLS_PER_REQUEST = 50
const REQUESTS = 1_000
const CONCURRENCY = 16
/**
 * Far below what the flood would take if it were all held in memory (about 100 MB of JSON, parsed into
 * objects and serialized again: several times that). This test process is also the client, and its
 * garbage counts too, hence the margin.
 */
const RSS_GROWTH_LIMIT = 160 * 1024 * 1024

test('a flood against a stalled store gets 503 + Retry-After past the queue limit; memory stays bounded; nothing admitted is lost', async (t) => {
  const sluice = await startTestSluice({ ingestQueueBytes: QUEUE_LIMIT })
  const source = await sluice.createSource()
  let openGate!: () => void
  const gate = new Promise<void>((resolve) => {
    openGate = resolve
  })
  const ingest = sluice.store.ingest.bind(sluice.store)
  sluice.store.ingest = async (messages) => {
    await gate
    return ingest(messages)
  }
  const body = Buffer.from(
    JSON.stringify({
      batch: Array.from({ length: CALLS_PER_REQUEST }, () =>
        trackCall({ properties: { note: 'x'.repeat(2_000) } }),
      ),
    }),
  )
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
  }
  try {
    global.gc?.()
    const rssBefore = process.memoryUsage.rss()
    let peakRss = rssBefore
    let peakQueueBytes = 0
    let refused = 0
    let committed = 0
    let sent = 0
    let answered = 0
    const post = async () => {
      const response = await fetch(`${sluice.url}/v1/batch`, { method: 'POST', headers, body })
      const text = await response.text()
      answered++
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
      if (response.status === 503) {
        assert.equal(response.headers.get('retry-after'), '1')
        assert.equal(JSON.parse(text).error.code, 'overloaded')
        refused++
      } else {
        assert.equal(response.status, 200, text)
        committed++
      }
    }
    // A worker whose request was admitted waits there for the gate; the others go on flooding. At
    // most limit / request size requests can be admitted, far fewer than the workers.
    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) {
        sent++
        await post()
      }
    })
    // Done flooding when every request was sent and all that are unanswered sit in the queue.
    await until(
      'every refusal to be answered',
      async () => {
        const samples = await scrape(sluice.url, sluice.adminToken)
        const queued = sampleValue(samples, 'sluice_ingest_queue_messages')!
        peakQueueBytes = Math.max(peakQueueBytes, sampleValue(samples, 'sluice_ingest_queue_bytes')!)
        return { sent, unanswered: sent - answered, queued }
      },
      ({ sent, unanswered, queued }) => sent === REQUESTS && unanswered * CALLS_PER_REQUEST === queued,
      120_000,
      5,
    )
    const admitted = REQUESTS - refused

    assert.ok(refused > REQUESTS / 2, `most of the flood was refused (${refused} of ${REQUESTS})`)
    const requestBytes = body.length
    assert.ok(
      peakQueueBytes < QUEUE_LIMIT + requestBytes,
      `the queue stayed within the limit plus one request: ${peakQueueBytes}`,
    )
    t.diagnostic(
      `flood of ${Math.round((REQUESTS * requestBytes) / 1048576)} MB: ${refused} requests refused, peak queue ${peakQueueBytes} bytes, RSS grew ${Math.round((peakRss - rssBefore) / 1048576)} MB`,
    )
    assert.ok(
      peakRss - rssBefore < RSS_GROWTH_LIMIT,
      `RSS grew ${Math.round((peakRss - rssBefore) / 1048576)} MB under a ${Math.round((REQUESTS * requestBytes) / 1048576)} MB flood`,
    )

    openGate()
    await Promise.all(workers)
    assert.equal(committed, admitted)
    assert.ok(committed >= 1)
    assert.equal(await sluice.store.countMessages(source.id), committed * CALLS_PER_REQUEST)
    const samples = await until(
      'the queue to drain',
      () => scrape(sluice.url, sluice.adminToken),
      (s) => sampleValue(s, 'sluice_ingest_queue_bytes') === 0,
    )
    assert.equal(
      sampleValue(samples, 'sluice_calls_rejected_total', { source: source.id, reason: 'overloaded' }),
      (REQUESTS - committed) * CALLS_PER_REQUEST,
    )
  } finally {
    openGate()
    await sluice.destroy()
  }
})
