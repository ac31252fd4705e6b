/**
 * Endpoint health shared across Sluice processes on one PostgreSQL: a URL disabled by one process's
 * request (410) gets no request from any process; its deliveries wait in every process; enabling it
 * through another process's API sends them; a failing alert is sent once although both processes
 * see the failures; a recovery seen by another process than the one that alerted is alerted too.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type Receiver, sleep, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'

/** The machine may be loaded: waits allow this long. */
const PATIENCE_MS = 30_000

let first: TestSluice
let second: TestSluice
let drop: () => Promise<void>
const receivers: Receiver[] = []

before(async () => {
  const database = await freshDatabase()
  drop = database.drop
  const settings = { databaseUrl: database.url, retry: { baseDelayMs: 20, maxDelayMs: 40, windowMs: 60_000 } }
  first = await startTestSluice(settings)
  second = await startTestSluice(settings)
})
after(async () => {
  await second.close()
  await first.close()
  for (const receiver of receivers) await receiver.close()
  await drop()
})

test('a URL disabled by one process gets nothing from any; enabling it in another sends what waited', async () => {
  let gone = true
  const target = await startReceiver((_req, res) => {
    res.writeHead(gone ? 410 : 200)
    res.end()
  })
  receivers.push(target)
  const source = await first.createSource('shared')
  const created = await first.api('POST', '/api/v1/destinations', {
    name: 'shared health',
    type: 'webhooks',
    sourceIds: [source.id],
    settings: { webhooks: [{ url: `${target.url}/gone` }] },
  })
  assert.equal(created.status, 201)
  const id = created.body.id as string
  const batch = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId: `${prefix}-${i}`,
    }))
  assert.equal(
    (await send(first.url, '/v1/batch', { batch: batch('a', 1) }, { writeKey: source.writeKey })).status,
    200,
  )
  await until(
    'the URL disabled, as both processes see it',
    async () => [
      (await first.api('GET', `/api/v1/destinations/${id}`)).body.health[0].state,
      (await second.api('GET', `/api/v1/destinations/${id}`)).body.health[0].state,
    ],
    (states) => states.every((state) => state === 'disabled'),
    PATIENCE_MS,
  )
  // Both delivery engines have read the disabled state (a fixed wait for their reload ran out on a
  // loaded machine, and an engine that had not reloaded yet sent to the URL).
  await until(
    'both engines to know the URL disabled',
    () => [first, second].map((each) => each.sluice.engine.endpoints.isDisabled(id, `${target.url}/gone`)),
    (known) => known.every(Boolean),
    PATIENCE_MS,
  )
  gone = false
  // Sent through either process, the new deliveries wait in both: neither sends to the disabled URL.
  await send(first.url, '/v1/batch', { batch: batch('b', 5) }, { writeKey: source.writeKey })
  await send(second.url, '/v1/batch', { batch: batch('c', 5) }, { writeKey: source.writeKey })
  await sleep(800)
  assert.equal(target.requests.length, 1)
  const enabled = await second.api('POST', `/api/v1/destinations/${id}/urls/0/enable`)
  assert.equal(enabled.status, 200)
  const delivered = await until(
    'the waiting deliveries delivered',
    async () =>
      (await first.api('GET', `/api/v1/destinations/${id}/deliveries?status=delivered&limit=50`)).body
        .deliveries.length as number,
    (count) => count === 10,
    PATIENCE_MS,
  )
  assert.equal(delivered, 10)
})

test('two processes seeing a URL fail send its failing alert once', async () => {
  const alerts = await startReceiver()
  const down = await startReceiver((_req, res) => {
    res.writeHead(500)
    res.end()
  })
  receivers.push(alerts, down)
  assert.equal((await first.api('PUT', '/api/v1/alerts', { url: `${alerts.url}/alerts` })).status, 200)
  const source = await second.createSource('failing')
  const created = await second.api('POST', '/api/v1/destinations', {
    name: 'failing everywhere',
    type: 'webhooks',
    sourceIds: [source.id],
    settings: { webhooks: [{ url: `${down.url}/down` }] },
  })
  const id = created.body.id as string
  const batch = Array.from({ length: 40 }, (_, i) => ({
    type: 'track',
    userId: 'u',
    event: 'E',
    messageId: `f-${i}`,
  }))
  await send(first.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
  const failing = () =>
    alerts.requests.filter((r) => {
      const body = JSON.parse(r.body.toString('utf8')) as { type: string; data: { destinationId: string } }
      return body.type === 'destination.url.failing' && body.data.destinationId === id
    })
  await until('the failing alert', failing, (list) => list.length >= 1, PATIENCE_MS)
  await until(
    '100 failures',
    async () =>
      (await first.api('GET', `/api/v1/destinations/${id}`)).body.health[0].consecutiveFailures as number,
    (n) => n >= 100,
    PATIENCE_MS,
  )
  assert.equal(new Set(failing().map((r) => r.headers['webhook-id'])).size, 1)
})

test('a URL that recovers in another process than the one that sent its failing alert: the recovery is alerted', async () => {
  const database = await freshDatabase()
  const alerts = await startReceiver()
  let up = false
  const flaky = await startReceiver((_req, res) => {
    res.writeHead(up ? 200 : 500)
    res.end()
  })
  receivers.push(alerts, flaky)
  const settings = { databaseUrl: database.url, retry: { baseDelayMs: 20, maxDelayMs: 40, windowMs: 60_000 } }
  const alerting = await startTestSluice(settings)
  let recovering: TestSluice | undefined
  const alertsOf = (type: string) =>
    alerts.requests.filter((r) => (JSON.parse(r.body.toString('utf8')) as { type: string }).type === type)
  try {
    assert.equal((await alerting.api('PUT', '/api/v1/alerts', { url: `${alerts.url}/alerts` })).status, 200)
    const source = await alerting.createSource('flaky')
    await alerting.api('POST', '/api/v1/destinations', {
      name: 'flaky',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${flaky.url}/flaky` }] },
    })
    const batch = Array.from({ length: 30 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId: `r-${i}`,
    }))
    await send(alerting.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
    await until(
      'the failing alert',
      () => alertsOf('destination.url.failing'),
      (list) => list.length === 1,
      PATIENCE_MS,
    )
    // The process that saw the failures and alerted stops; another, which saw none of them, delivers
    // the retries once the URL answers again.
    await alerting.close()
    up = true
    recovering = await startTestSluice(settings)
    await until(
      'the recovered alert',
      () => alertsOf('destination.url.recovered'),
      (list) => list.length === 1,
      PATIENCE_MS,
    )
  } finally {
    await recovering?.destroy()
    await alerting.destroy()
    await database.drop()
  }
})
