// The group-commit pipeline on both real stores: a request's promise resolves only once its messages
// are committed, concurrent requests share commits, at most `maxCommitsInFlight` commits run at once,
// and a messageId sent by several concurrent requests is stored once.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { IngestPipeline } from '../../src/ingest/pipeline.ts'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { AcceptedMessage, Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore } from '../store/pg.ts'

const DAY = 86_400_000

function message(sourceId: string, messageId: string): AcceptedMessage {
  return {
    sourceId,
    messageId,
    type: 'track',
    receivedAt: Date.now(),
    routeTo: ['webhooks'],
    payloadJson: JSON.stringify({ type: 'track', messageId, userId: 'u', event: 'Pipelined' }),
  }
}

/** The real store, with a count of how many `ingest` calls are running at the same moment. */
function countingConcurrency(store: Store): { store: Store; peak(): number; calls(): number } {
  let running = 0
  let peak = 0
  let calls = 0
  const ingest = store.ingest.bind(store)
  store.ingest = async (messages, window) => {
    running++
    calls++
    peak = Math.max(peak, running)
    try {
      return await ingest(messages, window)
    } finally {
      running--
    }
  }
  return { store, peak: () => peak, calls: () => calls }
}

const backends: {
  name: string
  maxInFlight: number
  open(): Promise<{ store: Store; close(): Promise<void> }>
}[] = [
  {
    name: 'sqlite (one commit at a time)',
    maxInFlight: 1,
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), 'sluice-pipeline-'))
      const store = new ThreadedSqliteStore({ dataDir, synchronous: 'FULL' })
      await store.migrate()
      return {
        store,
        async close() {
          await store.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    },
  },
  {
    name: 'postgres (three commits at once)',
    maxInFlight: 3,
    async open() {
      const fresh = await freshSchema()
      const store = await openPgStore(fresh.schema, { poolSize: 6 })
      return {
        store,
        async close() {
          await store.close()
          await fresh.drop()
        },
      }
    },
  },
]

for (const backend of backends) {
  describe(`ingest pipeline on ${backend.name}`, () => {
    test('every request resolves after its messages are committed; shared ids are stored once', async () => {
      const opened = await backend.open()
      try {
        const counted = countingConcurrency(opened.store)
        const source = await counted.store.createSource({ name: 'pipeline', enabled: true })
        const pipeline = new IngestPipeline(counted.store, {
          dedupeWindowMs: DAY,
          maxCommitsInFlight: backend.maxInFlight,
        })
        // 60 requests of 20 messages, sent in six waves; every request also carries one id that all
        // requests of its wave share.
        const outcomes: Promise<void>[] = []
        for (let wave = 0; wave < 6; wave++) {
          for (let r = 0; r < 10; r++) {
            const ids = Array.from({ length: 19 }, (_, i) => `w${wave}-r${r}-${i}`)
            ids.push(`w${wave}-shared`)
            outcomes.push(
              pipeline.submit(ids.map((id) => message(source.id, id))).then(async ({ stored }) => {
                assert.equal(stored.length, 20)
                // Resolved means committed: a fresh read sees every message of this request.
                for (const id of ids) assert.ok(await counted.store.getMessage(source.id, id), `${id} stored`)
              }),
            )
          }
          await new Promise((resolve) => setImmediate(resolve))
        }
        await Promise.all(outcomes)
        await pipeline.drain()
        assert.equal(await counted.store.countMessages(source.id), 6 * 10 * 19 + 6)
        assert.equal(await counted.store.countDeliveries(), 0, 'no destination, so no deliveries')
        assert.ok(counted.peak() <= backend.maxInFlight, `at most ${backend.maxInFlight} commits at once`)
        assert.ok(counted.calls() < 60, `requests share commits (${counted.calls()} commits for 60 requests)`)
        if (backend.maxInFlight > 1) assert.ok(counted.peak() > 1, 'commits overlapped')
      } finally {
        await opened.close()
      }
    })

    test('a commit that fails rejects its requests (no 200) and the pipeline does not hang', async () => {
      const opened = await backend.open()
      const source = await opened.store.createSource({ name: 'pipeline', enabled: true })
      await opened.close() // the store is gone: every commit fails
      const pipeline = new IngestPipeline(opened.store, {
        dedupeWindowMs: DAY,
        maxCommitsInFlight: backend.maxInFlight,
      })
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, r) => pipeline.submit([message(source.id, `lost-${r}`)])),
      )
      assert.deepEqual(
        results.map((result) => result.status),
        ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
      )
      await pipeline.drain()
    })
  })
}
