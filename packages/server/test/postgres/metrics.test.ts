/**
 * `GET /metrics` with several processes on one PostgreSQL: each process counts what it did itself (the
 * calls it accepted, the deliveries it made), while the backlog gauges come from the shared store, so
 * every process reports the same backlog. Real child processes, a real receiver, the real PostgreSQL.
 */

import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Sample, sampleValue, scrape } from '../helpers/metrics.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import {
  type CountingReceiver,
  runCli,
  type SluiceChild,
  startCountingReceiver,
  startRole,
  stopChild,
} from './harness.ts'

const ADMIN = 'pg-metrics-admin-token-0123456789'
const CALLS_TO_FIRST_API = 7
const CALLS_TO_SECOND_API = 5
const TOTAL = CALLS_TO_FIRST_API + CALLS_TO_SECOND_API

/** A receiver that answers every request 503, so its deliveries wait as `retrying` in the store. */
async function startRefusingReceiver(): Promise<{
  url: string
  requests: () => number
  close(): Promise<void>
}> {
  let requests = 0
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      requests++
      response.statusCode = 503
      response.end('down for maintenance')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('/metrics from two API processes and a worker on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let dataDir: string
  let receiver: CountingReceiver
  let refusing: Awaited<ReturnType<typeof startRefusingReceiver>>
  let apis: SluiceChild[] = []
  let worker: SluiceChild
  let sourceId: string
  let accepting: string
  let down: string
  let scraped: { first: Sample[]; second: Sample[]; worker: Sample[] }

  before(async () => {
    database = await freshDatabase()
    dataDir = await mkdtemp(join(tmpdir(), 'sluice-pg-metrics-'))
    receiver = await startCountingReceiver()
    refusing = await startRefusingReceiver()
    const env = {
      DATABASE_URL: database.url,
      SLUICE_SECRET_KEY: TEST_SECRET_KEY,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: ADMIN,
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    }
    const source = JSON.parse(await runCli(['sources', 'create', 'metrics', '--json'], env)) as {
      id: string
      writeKey: string
    }
    sourceId = source.id
    ;[apis, worker] = await Promise.all([
      Promise.all([startRole('api', env), startRole('api', env)]),
      startRole('worker', env),
    ])
    const destination = async (name: string, url: string) => {
      const response = await fetch(`${apis[0]!.url}/api/v1/destinations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name,
          type: 'webhooks',
          sourceIds: [sourceId],
          settings: { webhooks: [{ url }] },
        }),
      })
      const text = await response.text()
      assert.equal(response.status, 201, text)
      return (JSON.parse(text) as { id: string }).id
    }
    accepting = await destination('Accepting', receiver.url)
    down = await destination('Down', refusing.url)

    const calls = (prefix: string, n: number) => ({
      batch: Array.from({ length: n }, (_, i) => trackCall({ messageId: `${prefix}-${i}` })),
    })
    const writeKey = { writeKey: source.writeKey }
    const [first, second] = apis as [SluiceChild, SluiceChild]
    assert.equal(
      (await send(first.url, '/v1/batch', calls('first', CALLS_TO_FIRST_API), writeKey)).status,
      200,
    )
    assert.equal(
      (await send(second.url, '/v1/batch', calls('second', CALLS_TO_SECOND_API), writeKey)).status,
      200,
    )
    // A repeat sent to the other process: deduplicated through the shared store, counted where it arrived.
    assert.equal((await send(second.url, '/v1/batch', calls('first', 1), writeKey)).status, 200)

    await until(
      'every call to reach the accepting receiver and every call to have been refused once',
      () => ({ delivered: receiver.total(), refused: refusing.requests() }),
      ({ delivered, refused }) => delivered === TOTAL && refused >= TOTAL,
      60_000,
    )
    // Outcomes are counted when decided; the backlog gauges are cached for up to 5 s per process. The
    // receiver counts a call before the worker commits its outcome, so a reading taken in between still
    // shows it pending: wait for a reading with every delivered call gone from the backlog. (If delivered
    // calls were ever counted as backlog, this would time out.)
    const settled = (samples: Sample[]) =>
      sampleValue(samples, 'sluice_delivery_backlog', { destination: down, state: 'retrying' }) === TOTAL &&
      (sampleValue(samples, 'sluice_delivery_backlog', { destination: accepting, state: 'pending' }) ?? 0) ===
        0
    scraped = {
      first: await until('first API backlog', () => scrape(first.url, ADMIN), settled, 30_000),
      second: await until('second API backlog', () => scrape(second.url, ADMIN), settled, 30_000),
      worker: await until(
        'worker outcomes and backlog',
        () => scrape(worker.url, ADMIN),
        (s) =>
          settled(s) &&
          sampleValue(s, 'sluice_deliveries_total', { destination: accepting, outcome: 'delivered' }) ===
            TOTAL,
        30_000,
      ),
    }
  })

  after(async () => {
    await Promise.all([...apis, worker].filter(Boolean).map((child) => stopChild(child).catch(() => {})))
    await receiver?.close()
    await refusing?.close()
    await database?.drop()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  test('each API process counts the calls it accepted, not the other one’s', () => {
    const source = { source: sourceId }
    assert.equal(sampleValue(scraped.first, 'sluice_calls_accepted_total', source), CALLS_TO_FIRST_API)
    assert.equal(sampleValue(scraped.second, 'sluice_calls_accepted_total', source), CALLS_TO_SECOND_API)
    assert.equal(sampleValue(scraped.first, 'sluice_calls_deduplicated_total', source) ?? 0, 0)
    assert.equal(sampleValue(scraped.second, 'sluice_calls_deduplicated_total', source), 1)
    // The worker serves no Tracking API: it accepted nothing.
    assert.equal(sampleValue(scraped.worker, 'sluice_calls_accepted_total', source) ?? 0, 0)
  })

  test('the worker counts the deliveries it made; the API processes made none', () => {
    const outcome = (samples: Sample[], destination: string, name: string) =>
      sampleValue(samples, 'sluice_deliveries_total', { destination, outcome: name }) ?? 0
    assert.equal(outcome(scraped.worker, accepting, 'delivered'), TOTAL)
    assert.ok(outcome(scraped.worker, down, 'retrying') >= TOTAL)
    for (const api of [scraped.first, scraped.second]) {
      assert.equal(outcome(api, accepting, 'delivered'), 0)
      assert.equal(outcome(api, down, 'retrying'), 0)
    }
  })

  test('the backlog comes from the shared store: every process reports the same', () => {
    for (const samples of [scraped.first, scraped.second, scraped.worker]) {
      assert.equal(
        sampleValue(samples, 'sluice_delivery_backlog', { destination: down, state: 'retrying' }),
        TOTAL,
      )
      assert.equal(
        sampleValue(samples, 'sluice_delivery_backlog', { destination: down, state: 'pending' }),
        0,
      )
      // Delivered calls are not backlog.
      assert.equal(
        sampleValue(samples, 'sluice_delivery_backlog', { destination: accepting, state: 'pending' }) ?? 0,
        0,
      )
    }
  })
})
