/**
 * A replay whose window reaches into the present reads only calls received at least
 * `SLUICE_REPLAY_HOLD_MS` ago, on both stores: a call whose commit came after a later-received call's
 * (its commit lagged its receipt) is still replayed, to a destination that did not get it live.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { type Receiver, sleep, startReceiver } from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

const HOLD_MS = 3_000

/** A stored track call as the Tracking API writes it, received at `receivedAt`. */
function trackPayload(messageId: string, receivedAt: number): string {
  const at = new Date(receivedAt).toISOString()
  return JSON.stringify({
    type: 'track',
    event: 'Order Completed',
    userId: 'late-user',
    properties: {},
    context: {},
    messageId,
    timestamp: at,
    originalTimestamp: at,
    receivedAt: at,
  })
}

for (const backend of backends) {
  describe(`replay hold (${backend.name})`, () => {
    let sluice: TestSluice
    let receiver: Receiver
    let drop: () => Promise<void>

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      receiver = await startReceiver()
      sluice = await startTestSluice({
        ...(database.url ? { databaseUrl: database.url } : {}),
        replayHoldMs: HOLD_MS,
      })
    })
    after(async () => {
      await sluice.close()
      await receiver.close()
      await drop()
    })

    interface ReplayView {
      status: string
      scanned: number
      enqueued: number
      delivered: number
      finishedAt: string | null
    }

    async function destination(
      name: string,
      enabled: boolean,
    ): Promise<{ id: string; sourceId: string; writeKey: string }> {
      const source = await sluice.createSource(name)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name,
        type: 'webhooks',
        enabled,
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/${encodeURIComponent(name)}` }] },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return { id: created.body.id as string, sourceId: source.id, writeKey: source.writeKey }
    }

    async function track(writeKey: string, messageId: string): Promise<void> {
      const response = await send(
        sluice.url,
        '/v1/track',
        { userId: 'u', event: 'Order Completed', messageId },
        { writeKey },
      )
      assert.equal(response.status, 200, response.text)
    }

    async function startReplay(destinationId: string, window: Record<string, unknown>) {
      const started = await sluice.api('POST', `/api/v1/destinations/${destinationId}/replays`, window)
      assert.equal(started.status, 201, JSON.stringify(started.body))
      const path = `/api/v1/destinations/${destinationId}/replays/${started.body.id}`
      return {
        id: started.body.id as string,
        read: async () => (await sluice.api('GET', path)).body as ReplayView,
      }
    }

    /** The replay once it has ended; it must have FINISHED. */
    async function finished(replay: { read: () => Promise<ReplayView> }): Promise<ReplayView> {
      const done = await until('the replay to finish', replay.read, (shown) => shown.status !== 'RUNNING')
      assert.equal(done.status, 'FINISHED')
      return done
    }

    test('a call committed after a later-received one is still replayed by a window reaching the present', async () => {
      // Disabled while the calls arrive: it gets them only through the replay.
      const target = await destination('backfilled while live', false)
      const windowEnd = Date.now() + 3_000
      const replay = await startReplay(target.id, {
        from: new Date(Date.now() - 60_000).toISOString(),
        to: new Date(windowEnd).toISOString(),
      })

      const beforeSend = Date.now()
      await track(target.writeKey, 'on-time')
      assert.ok(Date.now() < windowEnd, 'the call was received within the window')
      // A call received before that one, whose commit lagged by 600 ms (say, behind a slow disk): it
      // becomes visible after the runner could have read past its receive time.
      await sleep(600)
      const lateReceivedAt = beforeSend - 1
      const ingested = await sluice.store.ingest([
        {
          sourceId: target.sourceId,
          messageId: 'committed-late',
          type: 'track',
          receivedAt: lateReceivedAt,
          routeTo: ['webhooks'],
          payloadJson: trackPayload('committed-late', lateReceivedAt),
          userId: 'late-user',
        },
      ])
      assert.deepEqual(ingested.stored, [true])
      // Nothing received within the hold has been read yet.
      assert.equal((await replay.read()).scanned, 0)

      await until(
        'the window read to its end',
        replay.read,
        (shown) => shown.scanned === 2,
        windowEnd + HOLD_MS + 10_000 - Date.now(),
      )
      assert.equal(
        (await sluice.api('PATCH', `/api/v1/destinations/${target.id}`, { enabled: true })).status,
        200,
      )
      const done = await finished(replay)
      assert.deepEqual([done.scanned, done.enqueued, done.delivered], [2, 2, 2])
      const delivered = receiver.requests
        .filter((request) => request.headers['x-sluice-replay'] === replay.id)
        .map((request) => (JSON.parse(request.body.toString('utf8')) as { messageId: string }).messageId)
        .sort()
      assert.deepEqual(delivered, ['committed-late', 'on-time'])
    })

    test('a window that ended within the hold is not done until the hold has passed', async () => {
      const target = await destination('just now', true)
      await track(target.writeKey, 'just-now')
      const windowEnd = Date.now() + 1 // after the call's receive time, even within its millisecond
      const replay = await startReplay(target.id, {
        from: new Date(windowEnd - 60_000).toISOString(),
        to: new Date(windowEnd).toISOString(),
        force: true,
      })
      const done = await finished(replay)
      assert.equal(done.scanned, 1)
      const finishedAt = Date.parse(done.finishedAt ?? '')
      assert.ok(
        finishedAt >= windowEnd + HOLD_MS,
        `finished ${finishedAt - windowEnd} ms after the window's end`,
      )
    })
  })
}
