/**
 * kill -9 during a replay, on both stores. SQLite: the one `sluice start` child is killed and
 * restarted on the same data. PostgreSQL: two processes share the database; the one running the replay
 * is killed and the other takes it over once its lease runs out. Either way the replay finishes, every
 * call arrives, and only the engine's documented bound of unrecorded successes is sent again.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startReceiver } from '../deliver/receivers.ts'
import { fetchText } from '../helpers/http.ts'
import { type SluiceProcess, spawnSluice } from '../helpers/process.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { freshDatabase } from '../store/pg.ts'
import { until } from './helpers.ts'

const CONCURRENCY = 4
const TOKEN = 'replay-crash-token-0123456789'
const TOTAL = 600

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

for (const backend of backends) {
  test(`kill -9 during a replay (${backend.name}): it resumes, every call arrives, repeats stay within the engine's bound`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-replay-crash-'))
    const database = await backend.database()
    const seen = new Map<string, number>()
    // Slower answers from when the replay is under way until the kill, so that starting the second
    // process on a loaded machine cannot outlast the replay (600 calls at 4 × 30 ms take ~5 s).
    let slow = false
    const receiver = await startReceiver((req, res, body) => {
      if (req.headers['x-sluice-replay']) {
        const { messageId } = JSON.parse(body.toString('utf8')) as { messageId: string }
        seen.set(messageId, (seen.get(messageId) ?? 0) + 1)
      }
      setTimeout(() => res.writeHead(200).end('ok'), slow ? 250 : 30)
    })
    const env: Record<string, string> = {
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
      SLUICE_DELIVERY_LEASE_MS: '1500',
      // The calls are all stored before the replay starts: no need to wait the default 10 s behind them.
      SLUICE_REPLAY_HOLD_MS: '300',
      SLUICE_REQUEST_TIMEOUT_MS: '1000',
      SLUICE_DELIVERY_CONCURRENCY: String(CONCURRENCY),
      ...(database.url ? { DATABASE_URL: database.url, SLUICE_SECRET_KEY: TEST_SECRET_KEY } : {}),
    }
    const api = async (url: string, method: string, path: string, body?: unknown) => {
      const response = await fetchText(`${url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: response.status, body: JSON.parse(response.text) as any }
    }
    const processes: SluiceProcess[] = []
    try {
      const first = await spawnSluice(env)
      processes.push(first)
      const source = await api(first.url, 'POST', '/sources', { name: 'history' })
      assert.equal(source.status, 201, JSON.stringify(source.body))
      // Disabled while the calls arrive: the destination gets them only through the replay.
      const created = await api(first.url, 'POST', '/destinations', {
        name: 'backfilled',
        type: 'webhooks',
        enabled: false,
        sourceIds: [source.body.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      const destinationId = created.body.id as string
      const startedAt = Date.now()
      for (let b = 0; b < TOTAL / 50; b++) {
        const batch = Array.from({ length: 50 }, (_, i) => ({
          type: 'track',
          userId: 'u',
          event: 'E',
          messageId: `replayed-${b * 50 + i}`,
        }))
        const response = await send(first.url, '/v1/batch', { batch }, { writeKey: source.body.writeKey })
        assert.equal(response.status, 200)
      }
      assert.equal(
        (await api(first.url, 'PATCH', `/destinations/${destinationId}`, { enabled: true })).status,
        200,
      )
      const replay = await api(first.url, 'POST', `/destinations/${destinationId}/replays`, {
        from: new Date(startedAt - 1_000).toISOString(),
        to: new Date(Date.now() + 10).toISOString(),
      })
      assert.equal(replay.status, 201, JSON.stringify(replay.body))

      await until(
        'the replay under way',
        () => seen.size,
        (n) => n >= 50,
        30_000,
        5,
      )
      slow = true
      // PostgreSQL: a second process joins once the first holds the replay's lease; it may not run
      // the replay while that lease is renewed, and takes it over after the kill.
      if (database.url) processes.push(await spawnSluice(env))
      await until(
        'the replay further',
        () => seen.size,
        (n) => n >= 150,
        30_000,
        5,
      )
      // The process holding the replay's lease (on SQLite, the only one).
      first.child.kill('SIGKILL')
      assert.equal(await first.exited, 'SIGKILL')
      const atKill = seen.size
      slow = false
      assert.ok(atKill < TOTAL, 'the kill must happen mid-replay')
      const survivor = database.url ? processes[1]! : await spawnSluice(env)
      if (!database.url) processes.push(survivor)

      const done = await until(
        'the replay to finish after the kill',
        async () =>
          (await api(survivor.url, 'GET', `/destinations/${destinationId}/replays/${replay.body.id}`)).body,
        (body) => body.status !== 'RUNNING',
        30_000,
        50,
      )
      assert.equal(done.status, 'FINISHED')
      assert.equal(done.scanned, TOTAL)
      assert.equal(done.enqueued, TOTAL, 'each call got one delivery, whatever the kill interrupted')
      assert.equal(done.delivered, TOTAL)
      assert.equal(seen.size, TOTAL, 'every call arrived')
      const duplicates = [...seen.values()].reduce((sum, n) => sum + (n - 1), 0)
      console.log(
        `replay crash (${backend.name}): ${TOTAL} calls, ${atKill} before the kill, ${duplicates} sent twice`,
      )
      assert.ok(
        duplicates <= 2 * CONCURRENCY,
        `${duplicates} repeats; the engine's bound is ${2 * CONCURRENCY}`,
      )
    } finally {
      for (const child of processes) {
        if (child.child.exitCode === null && child.child.signalCode === null) {
          child.child.kill('SIGTERM')
          await child.exited
        }
      }
      await receiver.close()
      await database.drop()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}
