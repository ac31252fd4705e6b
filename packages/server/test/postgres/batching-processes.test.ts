// Batching with several worker processes on one PostgreSQL: they form, claim and send batches of the
// same destination at once, and still every message goes in exactly one batch, sent once.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startReceiver } from '../deliver/receivers.ts'
import { fetchText } from '../helpers/http.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { runCli, startRole, stopChild } from './harness.ts'

const ADMIN = 'batch-mp-admin-token-0123456789'
const TOTAL = 2_000
const MAX_EVENTS = 25

test('two workers batching one destination: every message in exactly one batch, every batch sent once', async () => {
  const database = await freshDatabase()
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-batch-mp-'))
  /** messageId → how many requests carried it. */
  const carried = new Map<string, number>()
  const sizes: number[] = []
  const receiver = await startReceiver((_req, res, body) => {
    const messages = JSON.parse(body.toString('utf8')) as { messageId: string }[]
    sizes.push(messages.length)
    for (const { messageId } of messages) carried.set(messageId, (carried.get(messageId) ?? 0) + 1)
    setTimeout(() => res.end('ok'), 5)
  })
  const env = {
    DATABASE_URL: database.url,
    SLUICE_SECRET_KEY: TEST_SECRET_KEY,
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: ADMIN,
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    SLUICE_DELIVERY_LEASE_MS: '10000',
    SLUICE_REQUEST_TIMEOUT_MS: '2000',
    SLUICE_DELIVERY_CONCURRENCY: '4',
  }
  const source = JSON.parse(await runCli(['sources', 'create', 'batches', '--json'], env)) as {
    id: string
    writeKey: string
  }
  const children = await Promise.all([
    startRole('api', env),
    startRole('worker', env),
    startRole('worker', env),
  ])
  const api = children[0]!
  try {
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const created = await fetchText(`${api.url}/api/v1/destinations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'batches',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: {
          webhooks: [{ url: `${receiver.url}/hook` }],
          batching: { maxEvents: MAX_EVENTS, maxBytes: 512_000, maxWaitMs: 100 },
        },
      }),
    })
    assert.equal(created.status, 201, created.text)
    const destinationId = (JSON.parse(created.text) as { id: string }).id
    for (let b = 0; b < TOTAL / 100; b++) {
      const batch = Array.from({ length: 100 }, (_, i) => ({
        type: 'track',
        userId: 'u',
        event: 'E',
        messageId: `mp-${b * 100 + i}`,
      }))
      const sent = await fetchText(`${api.url}/v1/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
        },
        body: JSON.stringify({ batch }),
      })
      assert.equal(sent.status, 200, sent.text)
    }
    await until(
      'every delivery recorded as delivered',
      async () =>
        (
          JSON.parse(
            (await fetchText(`${api.url}/api/v1/destinations/${destinationId}/stats`, { headers })).text,
          ) as {
            delivered: number
          }
        ).delivered,
      (delivered) => delivered === TOTAL,
      30_000,
      100,
    )
    assert.equal(carried.size, TOTAL, 'every message arrived')
    const repeated = [...carried].filter(([, n]) => n > 1)
    assert.deepEqual(repeated, [], 'no message was sent twice')
    assert.ok(
      sizes.every((size) => size >= 1 && size <= MAX_EVENTS),
      `batch sizes within 1–${MAX_EVENTS}: ${sizes.join(',')}`,
    )
    assert.ok(
      sizes.length < TOTAL / 5,
      `${sizes.length} requests for ${TOTAL} messages: they went in batches`,
    )
  } finally {
    await Promise.all(children.map((child) => stopChild(child)))
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
    await database.drop()
  }
})
