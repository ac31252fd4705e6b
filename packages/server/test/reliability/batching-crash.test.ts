/**
 * kill -9 with batching on, on both stores: a `sluice start` child process is killed while batches are
 * formed, claimed and in flight, then restarted on the same data. Nothing acknowledged is lost, every
 * message belongs to exactly one batch (every request that carried it had the same members), and no
 * kill re-sends more batches than the engine's bound: twice `SLUICE_DELIVERY_CONCURRENCY` per destination.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startReceiver } from '../deliver/receivers.ts'
import { fetchText } from '../helpers/http.ts'
import { runCli, spawnSluice } from '../helpers/process.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { freshDatabase } from '../store/pg.ts'
import { LONG, until } from './helpers.ts'

const CONCURRENCY = 4
const TOKEN = 'batch-crash-token-0123456789'
const TOTAL = 2_000
const MAX_EVENTS = 20
/** Messages arrived before each kill (`npm run test:long`: more kills). */
const KILL_AT = LONG ? [500, 800, 1_100, 1_400, 1_700] : [600, 1_300]

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

for (const backend of backends) {
  test(`kill -9 while batches are in flight (${backend.name}): nothing lost, one batch per message, bounded repeats`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-batch-crash-'))
    const database = await backend.database()
    /** Per request body as received: how many times it came. */
    const bodies = new Map<string, number>()
    /** Per messageId: the bodies that carried it. */
    const carriedBy = new Map<string, Set<string>>()
    const receiver = await startReceiver((_req, res, body) => {
      const text = body.toString('utf8')
      bodies.set(text, (bodies.get(text) ?? 0) + 1)
      for (const message of JSON.parse(text) as { messageId: string }[]) {
        const set = carriedBy.get(message.messageId) ?? new Set<string>()
        set.add(text)
        carriedBy.set(message.messageId, set)
      }
      setTimeout(() => res.writeHead(200).end('ok'), 50)
    })
    const env: Record<string, string> = {
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
      SLUICE_DELIVERY_LEASE_MS: '1500',
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
    let sluice = await spawnSluice(env)
    try {
      const source = JSON.parse((await runCli(['sources', 'create', 'crash', '--json'], env)).stdout) as {
        id: string
        writeKey: string
      }
      const created = await api(sluice.url, 'POST', '/destinations', {
        name: 'batches',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: {
          webhooks: [{ url: `${receiver.url}/hook` }],
          batching: { maxEvents: MAX_EVENTS, maxBytes: 512_000, maxWaitMs: 200 },
        },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      const destinationId = created.body.id as string

      for (let b = 0; b < TOTAL / 50; b++) {
        const batch = Array.from({ length: 50 }, (_, i) => ({
          type: 'track',
          userId: 'u',
          event: 'E',
          messageId: `crash-${b * 50 + i}`,
        }))
        const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
        assert.equal(response.status, 200)
      }
      // Each kill once more messages arrived: the later ones land among retried, leased and new batches.
      const kills: number[] = []
      for (const threshold of KILL_AT) {
        await until(
          'deliveries under way',
          () => carriedBy.size,
          (n) => n >= threshold,
          30_000,
          5,
        )
        sluice.child.kill('SIGKILL')
        assert.equal(await sluice.exited, 'SIGKILL')
        kills.push(carriedBy.size)
        if (kills.length < KILL_AT.length) sluice = await spawnSluice(env)
      }
      assert.ok(kills.at(-1)! < TOTAL, 'the last kill must happen mid-delivery')

      sluice = await spawnSluice(env)
      await until(
        'every delivery recorded as delivered',
        async () => (await api(sluice.url, 'GET', `/destinations/${destinationId}/stats`)).body.delivered,
        (delivered) => delivered === TOTAL,
        30_000,
        100,
      )
      assert.equal(carriedBy.size, TOTAL, 'every message arrived')
      for (const [messageId, carriers] of carriedBy) {
        assert.equal(carriers.size, 1, `${messageId} was sent in ${carriers.size} different batches`)
      }
      const repeats = [...bodies.values()].reduce((sum, n) => sum + (n - 1), 0)
      const requests = [...bodies.values()].reduce((sum, n) => sum + n, 0)
      console.log(
        `batching crash (${backend.name}): ${TOTAL} messages in ${bodies.size} batches (${requests} requests); ` +
          `kills after ${kills.join(', ')} messages; ${repeats} batches sent twice`,
      )
      // Each kill can leave at most 2 × concurrency batches sent but not recorded.
      assert.ok(
        repeats <= 2 * CONCURRENCY * kills.length,
        `${repeats} batches sent again; at most ${2 * CONCURRENCY} per kill can be unrecorded`,
      )
      assert.ok(bodies.size < TOTAL / 5, 'messages went in batches')

      // The deliveries API shows each message in the batch that carried it.
      const batchOf = new Map<string, number>()
      let before: number | undefined
      do {
        const page = await api(
          sluice.url,
          'GET',
          `/destinations/${destinationId}/deliveries?limit=500${before ? `&before=${before}` : ''}`,
        )
        for (const d of page.body.deliveries as { messageId: string; batchId: number }[])
          batchOf.set(d.messageId, d.batchId)
        before = page.body.nextCursor ?? undefined
      } while (before !== undefined)
      assert.equal(batchOf.size, TOTAL)
      for (const body of bodies.keys()) {
        const ids = (JSON.parse(body) as { messageId: string }[]).map((m) => batchOf.get(m.messageId))
        assert.ok(ids[0] !== undefined && ids.every((id) => id === ids[0]), 'one request, one batch id')
      }
      sluice.child.kill('SIGTERM')
      assert.equal(await sluice.exited, 0)
    } finally {
      if (sluice.child.exitCode === null && sluice.child.signalCode === null) sluice.child.kill('SIGKILL')
      await receiver.close()
      await rm(dataDir, { recursive: true, force: true })
      await database.drop()
    }
  })
}
