/**
 * Replays (`/api/v1/destinations/:id/replays`), end to end on both stores: a real Sluice, real
 * recording HTTP receivers. Each stored call once per replay, skipped when already delivered unless
 * forced; the destination's subscription and filters and the replay's own types and events applied;
 * batching applied; `X-Sluice-Replay` on every request; cancel stops everything; live calls keep
 * arriving during a replay; bad input refused with what to fix.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Source } from '../../src/domain/sources.ts'
import { sampleValue, scrape } from '../helpers/metrics.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { type Receiver, type Respond, sleep, startReceiver } from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

const HOUR = 3_600_000

interface ReplayBody {
  id: string
  status: string
  scanned: number
  matched: number
  enqueued: number
  skipped: number
  delivered: number
  failed: number
  finishedAt: string | null
}

for (const backend of backends) {
  describe(`replays (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    const receivers: Receiver[] = []

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice({
        ...(database.url ? { databaseUrl: database.url } : {}),
        retry: { baseDelayMs: 50, maxDelayMs: 100, windowMs: 1_500 },
      })
    })
    after(async () => {
      await sluice.close()
      for (const receiver of receivers) await receiver.close()
      await drop()
    })

    async function destination(
      sourceIds: string[],
      settings: Record<string, unknown> = {},
      respond?: Respond,
    ) {
      const receiver = await startReceiver(respond)
      receivers.push(receiver)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `replayed ${receivers.length}`,
        type: 'webhooks',
        sourceIds,
        settings: { webhooks: [{ url: `${receiver.url}/in` }], ...settings },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return { receiver, id: created.body.id as string }
    }

    async function calls(source: Source, batch: Record<string, unknown>[]) {
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200, response.text)
    }

    const tracks = (prefix: string, count: number, event = 'Order Completed') =>
      Array.from({ length: count }, (_, i) => ({
        type: 'track',
        userId: `user-${i}`,
        event,
        messageId: `${prefix}-${i}`,
        properties: { i },
      }))

    const window = () => ({
      from: new Date(Date.now() - HOUR).toISOString(),
      to: new Date(Date.now() + 1_000).toISOString(),
    })

    async function startReplay(destinationId: string, body: Record<string, unknown>) {
      const started = await sluice.api('POST', `/api/v1/destinations/${destinationId}/replays`, body)
      assert.equal(started.status, 201, JSON.stringify(started.body))
      assert.equal(started.body.status, 'RUNNING')
      return started.body as ReplayBody
    }

    function finished(destinationId: string, replayId: string) {
      return until(
        `replay ${replayId} to finish`,
        async () =>
          (await sluice.api('GET', `/api/v1/destinations/${destinationId}/replays/${replayId}`))
            .body as ReplayBody,
        (replay) => replay.status !== 'RUNNING',
        15_000,
      )
    }

    const messageIds = (receiver: Receiver, replayId?: string) =>
      receiver.requests
        .filter((request) => replayId === undefined || request.headers['x-sluice-replay'] === replayId)
        .map((request) => (JSON.parse(request.body.toString('utf8')) as { messageId: string }).messageId)
        .sort()

    test('each stored call goes once to a new destination; again only with force; never twice to one that has it', async () => {
      const source = await sluice.createSource('history')
      const live = await destination([source.id])
      await calls(source, tracks('hist', 6))
      await until(
        'live deliveries',
        () => live.receiver.requests.length,
        (n) => n === 6,
      )

      const fresh = await destination([source.id])
      assert.equal(fresh.receiver.requests.length, 0, 'a new destination gets no history by itself')
      const first = await startReplay(fresh.id, window())
      const done = await finished(fresh.id, first.id)
      assert.equal(done.status, 'FINISHED')
      assert.deepEqual(
        {
          scanned: done.scanned,
          matched: done.matched,
          enqueued: done.enqueued,
          skipped: done.skipped,
          delivered: done.delivered,
          failed: done.failed,
        },
        { scanned: 6, matched: 6, enqueued: 6, skipped: 0, delivered: 6, failed: 0 },
      )
      assert.ok(done.finishedAt)
      assert.deepEqual(
        messageIds(fresh.receiver),
        tracks('hist', 6)
          .map((call) => call.messageId)
          .sort(),
      )
      for (const request of fresh.receiver.requests)
        assert.equal(request.headers['x-sluice-replay'], first.id)
      const deliveriesOf = async (destinationId: string) =>
        (await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries?limit=100`)).body
          .deliveries as { replayId?: string }[]
      assert.deepEqual(
        (await deliveriesOf(fresh.id)).map((delivery) => delivery.replayId),
        Array(6).fill(first.id),
      )
      assert.ok((await deliveriesOf(live.id)).every((delivery) => !('replayId' in delivery)))

      // Already delivered: skipped.
      const again = await finished(fresh.id, (await startReplay(fresh.id, window())).id)
      assert.equal(again.status, 'FINISHED')
      assert.deepEqual([again.matched, again.enqueued, again.skipped], [6, 0, 6])
      const toLive = await finished(live.id, (await startReplay(live.id, window())).id)
      assert.deepEqual([toLive.enqueued, toLive.skipped], [0, 6])
      await sleep(200)
      assert.equal(fresh.receiver.requests.length, 6)
      assert.equal(live.receiver.requests.length, 6)

      // Forced: sent again, once more each.
      const forced = await startReplay(fresh.id, { ...window(), force: true })
      const forcedDone = await finished(fresh.id, forced.id)
      assert.deepEqual([forcedDone.enqueued, forcedDone.skipped, forcedDone.delivered], [6, 0, 6])
      assert.deepEqual(
        messageIds(fresh.receiver, forced.id),
        tracks('hist', 6)
          .map((call) => call.messageId)
          .sort(),
      )
      assert.equal(fresh.receiver.requests.length, 12)

      const listed = await sluice.api('GET', `/api/v1/destinations/${fresh.id}/replays`)
      assert.equal(listed.status, 200)
      assert.deepEqual(
        listed.body.replays.map((replay: ReplayBody) => replay.id),
        [forced.id, again.id, first.id],
      )
      const metrics = await scrape(sluice.url, sluice.adminToken)
      assert.equal(
        sampleValue(metrics, 'sluice_replay_messages_total', { destination: fresh.id, outcome: 'delivered' }),
        12,
      )
      assert.equal(
        sampleValue(metrics, 'sluice_replay_messages_total', { destination: fresh.id, outcome: 'skipped' }),
        6,
      )
    })

    test("the window, the replay's types and events, and the destination's subscription and filters decide what goes", async () => {
      const source = await sluice.createSource('filtered history')
      const other = await sluice.createSource('other source')
      const before = Date.now()
      await calls(source, [
        ...tracks('keep', 3),
        ...tracks('other-event', 2, 'Page Viewed'),
        { type: 'identify', userId: 'u', traits: { plan: 'pro' }, messageId: 'identify-1' },
        { ...tracks('dropped', 1)[0], properties: { internal: true } },
        { ...tracks('no-webhooks', 1)[0], integrations: { Webhooks: false } },
      ])
      await calls(other, tracks('other-source', 2))
      await sleep(20)
      const afterFirst = Date.now()
      await sleep(20)
      await calls(source, tracks('too-late', 2))
      const target = await destination([source.id, other.id], {
        subscription: 'type = "track" or type = "identify"',
        filters: [{ action: 'drop', if: 'properties.internal = true' }],
      })
      const window = { from: new Date(before - 1).toISOString(), to: new Date(afterFirst).toISOString() }
      const replay = await startReplay(target.id, {
        ...window,
        sourceIds: [source.id],
        types: ['track'],
        events: ['Order Completed'],
      })
      const done = await finished(target.id, replay.id)
      assert.equal(done.status, 'FINISHED')
      assert.deepEqual(messageIds(target.receiver), ['keep-0', 'keep-1', 'keep-2'])
      assert.deepEqual([done.scanned, done.matched, done.enqueued], [8, 3, 3])

      // Without the replay's own filters: the subscription and filters alone.
      const wide = await finished(target.id, (await startReplay(target.id, window)).id)
      assert.deepEqual(messageIds(target.receiver, wide.id), [
        'identify-1',
        'other-event-0',
        'other-event-1',
        'other-source-0',
        'other-source-1',
      ])
      assert.deepEqual([wide.scanned, wide.matched, wide.enqueued, wide.skipped], [10, 8, 5, 3])
    })

    test('a batching destination gets replayed calls in batches, each batch with the replay id', async () => {
      const source = await sluice.createSource('batched history')
      await calls(source, tracks('batched', 7))
      const target = await destination([source.id], {
        batching: { maxEvents: 3, maxBytes: 512_000, maxWaitMs: 100 },
      })
      const replay = await startReplay(target.id, window())
      const done = await finished(target.id, replay.id)
      assert.equal(done.delivered, 7)
      const sizes = target.receiver.requests.map(
        (request) => (JSON.parse(request.body.toString('utf8')) as unknown[]).length,
      )
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        7,
      )
      assert.ok(
        sizes.every((size) => size <= 3) && sizes.filter((size) => size === 3).length >= 2,
        `sizes ${sizes}`,
      )
      for (const request of target.receiver.requests)
        assert.equal(request.headers['x-sluice-replay'], replay.id)
      const members = target.receiver.requests.flatMap((request) =>
        (JSON.parse(request.body.toString('utf8')) as { messageId: string }[]).map((call) => call.messageId),
      )
      assert.deepEqual(
        members.sort(),
        tracks('batched', 7)
          .map((call) => call.messageId)
          .sort(),
      )
    })

    test('a batching destination with live calls waiting for their batch still gets the replay', async () => {
      const source = await sluice.createSource('batched history beside live calls')
      await calls(source, tracks('waiting', 7))
      const target = await destination([source.id], {
        batching: { maxEvents: 1_000, maxBytes: 512_000, maxWaitMs: 2_000 },
      })
      // A live call every 50 ms from before the replay starts: one always waits for its batch to fill.
      let done: ReplayBody | null = null
      let replayId: string | null = null
      const end = Date.now() + 10_000
      for (let i = 0; done === null && Date.now() < end; i++) {
        await calls(source, tracks(`trickle-${i}`, 1))
        await sleep(50)
        if (i === 3) replayId = (await startReplay(target.id, window())).id
        if (replayId === null) continue
        const shown = (await sluice.api('GET', `/api/v1/destinations/${target.id}/replays/${replayId}`))
          .body as ReplayBody
        if (shown.status !== 'RUNNING') done = shown
      }
      assert.ok(done, 'the replay finished while live calls kept arriving')
      assert.equal(done.delivered, 7)
      const replayed = target.receiver.requests.filter(
        (request) => request.headers['x-sluice-replay'] === replayId,
      )
      assert.deepEqual(
        replayed
          .flatMap((request) =>
            (JSON.parse(request.body.toString('utf8')) as { messageId: string }[]).map(
              (call) => call.messageId,
            ),
          )
          .sort(),
        tracks('waiting', 7)
          .map((call) => call.messageId)
          .sort(),
      )
    })

    test('cancel: nothing more of the replay is sent once it answers, and live calls keep going', async () => {
      const source = await sluice.createSource('long history')
      await calls(source, tracks('long', 300))
      const slow: Respond = (req, res) => {
        setTimeout(() => res.end('ok'), req.headers['x-sluice-replay'] ? 30 : 0)
      }
      const target = await destination([source.id], {}, slow)
      const replay = await startReplay(target.id, window())
      await until(
        'the replay to start sending',
        () => target.receiver.requests.length,
        (n) => n >= 20,
      )
      // Live calls arrive while the replay runs.
      await calls(source, tracks('live-during', 5))
      await until(
        'live calls during the replay',
        () => messageIds(target.receiver).filter((id) => id.startsWith('live-during')).length,
        (n) => n === 5,
      )
      const cancelled = await sluice.api('DELETE', `/api/v1/destinations/${target.id}/replays/${replay.id}`)
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body))
      assert.equal(cancelled.body.status, 'CANCELLED')
      const sentAtCancel = target.receiver.requests.filter(
        (request) => request.headers['x-sluice-replay'],
      ).length
      assert.ok(sentAtCancel < 300, `the replay was still running (${sentAtCancel} sent)`)
      await calls(source, tracks('live-after', 3))
      await until(
        'live calls after the cancel',
        () => messageIds(target.receiver).filter((id) => id.startsWith('live-after')).length,
        (n) => n === 3,
      )
      await sleep(500)
      assert.equal(
        target.receiver.requests.filter((request) => request.headers['x-sluice-replay']).length,
        sentAtCancel,
      )
      const shown = (await sluice.api('GET', `/api/v1/destinations/${target.id}/replays/${replay.id}`))
        .body as ReplayBody
      assert.equal(shown.status, 'CANCELLED')
      assert.equal(shown.delivered, sentAtCancel)
      const counted = await sluice.api('GET', `/api/v1/destinations/${target.id}/stats`)
      assert.equal(counted.body.pending + counted.body.retrying, 0, 'nothing of the replay is left waiting')
      // Cancelling again answers the replay as it is.
      const twice = await sluice.api('DELETE', `/api/v1/destinations/${target.id}/replays/${replay.id}`)
      assert.equal(twice.status, 200)
      assert.equal(twice.body.status, 'CANCELLED')
    })

    test('bad input: the window, retention, unknown or unconnected sources, unknown destination, viewers', async () => {
      const source = await sluice.createSource('checked')
      const stranger = await sluice.createSource('not connected')
      const target = await destination([source.id])
      const path = `/api/v1/destinations/${target.id}/replays`
      const at = '2026-11-27T10:00:00Z'
      const refused = async (body: Record<string, unknown>, field: string, message: RegExp, to = path) => {
        const answer = await sluice.api('POST', to, body)
        assert.equal(answer.status, 400, JSON.stringify(answer.body))
        assert.equal(answer.body.error.field, field)
        assert.match(answer.body.error.message, message)
      }
      const now = Date.now()
      const recent = new Date(now - HOUR).toISOString()
      await refused({ from: new Date(now).toISOString(), to: recent }, '/to', /"from" .* must be before "to"/)
      await refused({ from: recent, to: recent }, '/to', /must be before/)
      await refused(
        { from: new Date(now - 31 * 24 * HOUR).toISOString(), to: recent },
        '/from',
        /calls received before \d{4}-\d{2}-\d{2}T.* are gone: Sluice keeps calls for 30 days \(SLUICE_RETENTION_DAYS\)/,
      )
      await refused({ from: 'yesterday', to: at }, '/from', /ISO 8601/)
      await refused(
        { from: recent, to: new Date(now).toISOString(), sourceIds: ['src_nope'] },
        '/sourceIds/0',
        /No source src_nope/,
      )
      await refused(
        { from: recent, to: new Date(now).toISOString(), sourceIds: [source.id, stranger.id] },
        '/sourceIds/1',
        /is not connected to destination/,
      )
      const missing = await sluice.api('POST', '/api/v1/destinations/dst_missing/replays', {
        from: recent,
        to: at,
      })
      assert.equal(missing.status, 404)
      const unknownReplay = await sluice.api('GET', `${path}/rpl_missing`)
      assert.equal(unknownReplay.status, 404)
      assert.equal(unknownReplay.body.error.code, 'replay_not_found')
      assert.equal(
        (await sluice.api('GET', path)).body.replays.length,
        0,
        'nothing was started by refused requests',
      )

      const viewer = await sluice.api('POST', '/api/v1/tokens', { name: 'replay viewer', role: 'viewer' })
      const asViewer = (method: string, to: string, body?: unknown) =>
        fetch(sluice.url + to, {
          method,
          headers: { authorization: `Bearer ${viewer.body.token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      assert.equal(
        (await asViewer('POST', path, { from: recent, to: new Date(now).toISOString() })).status,
        403,
      )
      const started = await startReplay(target.id, { from: recent, to: new Date(now).toISOString() })
      assert.equal((await asViewer('GET', path)).status, 200)
      assert.equal((await asViewer('GET', `${path}/${started.id}`)).status, 200)
      assert.equal((await asViewer('DELETE', `${path}/${started.id}`)).status, 403)
    })
  })
}
