// The group commit on both real stores: a request's promise resolves only once its messages
// are committed, concurrent requests share commits, at most `maxCommitsInFlight` commits run at once,
// a messageId sent by several concurrent requests is stored once, and the deliveries a commit created
// are announced (Store.watch) before its requests resolve.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import { GroupCommit } from '../../src/ingest/group-commit.ts'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore, withAdmin } from '../store/pg.ts'

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
  store.ingest = async (messages) => {
    running++
    calls++
    peak = Math.max(peak, running)
    try {
      return await ingest(messages)
    } finally {
      running--
    }
  }
  return { store, peak: () => peak, calls: () => calls }
}

const backends: {
  name: string
  maxInFlight: number
  open(): Promise<{ store: Store; close(): Promise<void>; beside(sql: string): Promise<void> }>
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
        async beside(sql) {
          const db = new DatabaseSync(databasePath(dataDir))
          db.exec(sql)
          db.close()
        },
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
        beside: (sql) =>
          withAdmin(async (client) => {
            await client.query(`SET search_path TO ${fresh.schema}`)
            await client.query(sql)
          }),
        async close() {
          await store.close()
          await fresh.drop()
        },
      }
    },
  },
]

for (const backend of backends) {
  describe(`group commit on ${backend.name}`, () => {
    test('every request resolves after its messages are committed; shared ids are stored once', async () => {
      const opened = await backend.open()
      try {
        const counted = countingConcurrency(opened.store)
        const source = await counted.store.createSource({ name: 'pipeline', enabled: true })
        const groupCommit = new GroupCommit(counted.store, { maxCommitsInFlight: backend.maxInFlight })
        // 60 requests of 20 messages, sent in six waves; every request also carries one id that all
        // requests of its wave share.
        const outcomes: Promise<void>[] = []
        for (let wave = 0; wave < 6; wave++) {
          for (let r = 0; r < 10; r++) {
            const ids = Array.from({ length: 19 }, (_, i) => `w${wave}-r${r}-${i}`)
            ids.push(`w${wave}-shared`)
            outcomes.push(
              groupCommit.submit(ids.map((id) => message(source.id, id))).then(async ({ stored }) => {
                assert.equal(stored.length, 20)
                // Resolved means committed: a fresh read sees every message of this request.
                for (const id of ids) assert.ok(await counted.store.getMessage(source.id, id), `${id} stored`)
              }),
            )
          }
          await new Promise((resolve) => setImmediate(resolve))
        }
        await Promise.all(outcomes)
        await groupCommit.drain()
        assert.equal(await counted.store.countMessages(source.id), 6 * 10 * 19 + 6)
        assert.equal(await counted.store.countDeliveries(), 0, 'no destination, so no deliveries')
        assert.ok(counted.peak() <= backend.maxInFlight, `at most ${backend.maxInFlight} commits at once`)
        assert.ok(counted.calls() < 60, `requests share commits (${counted.calls()} commits for 60 requests)`)
        if (backend.maxInFlight > 1) assert.ok(counted.peak() > 1, 'commits overlapped')
      } finally {
        await opened.close()
      }
    })

    test('the store announces the deliveries a commit created before its requests resolve', async () => {
      const opened = await backend.open()
      try {
        const { store } = opened
        const source = await store.createSource({ name: 'pipeline', enabled: true })
        await store.createDestination({
          name: 'hooks',
          type: 'webhooks',
          enabled: true,
          sourceIds: [source.id],
          settings: { webhooks: [{ url: 'https://example.com/hook', headers: {} }], sharedSecret: null },
        })
        const events: string[] = []
        const unwatch = await store.watch((event) => events.push(event))
        await new Promise((resolve) => setTimeout(resolve, 50)) // announcements from the set-up arrive
        events.length = 0
        const groupCommit = new GroupCommit(store, { maxCommitsInFlight: backend.maxInFlight })
        const heardByThen = await groupCommit
          .submit([message(source.id, 'announced')])
          .then(() => [...events])
        assert.ok(
          heardByThen.includes('deliveries'),
          'the delivery engine is woken no later than the client is answered',
        )
        await unwatch()
      } finally {
        await opened.close()
      }
    })

    test('a request the store refuses fails alone: the others of its commit are stored', async () => {
      const opened = await backend.open()
      try {
        const source = await opened.store.createSource({ name: 'pipeline', enabled: true })
        await opened.beside(
          backend.maxInFlight === 1
            ? `CREATE TRIGGER refuse_poison BEFORE INSERT ON messages WHEN NEW.message_id = 'poison'
               BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
            : `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
               CREATE TRIGGER refuse_poison BEFORE INSERT ON messages FOR EACH ROW
               WHEN (NEW.message_id = 'poison') EXECUTE FUNCTION refuse_poison();`,
        )
        // One commit in flight: every request submitted in one turn joins the same commit.
        const groupCommit = new GroupCommit(opened.store, { maxCommitsInFlight: 1 })
        const ids = ['fine-1', 'poison', 'fine-2']
        const results = await Promise.allSettled(
          ids.map((id) => groupCommit.submit([message(source.id, id)])),
        )
        assert.deepEqual(
          results.map((result) => result.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        )
        assert.match(String((results[1] as PromiseRejectedResult).reason), /refused by the test/)
        for (const id of ['fine-1', 'fine-2']) assert.ok(await opened.store.getMessage(source.id, id), id)
        await groupCommit.drain()
      } finally {
        await opened.close()
      }
    })

    test('a commit that fails rejects its requests (no 200) and the group commit does not hang', async () => {
      const opened = await backend.open()
      const source = await opened.store.createSource({ name: 'pipeline', enabled: true })
      await opened.close() // the store is gone: every commit fails
      const groupCommit = new GroupCommit(opened.store, { maxCommitsInFlight: backend.maxInFlight })
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, r) => groupCommit.submit([message(source.id, `lost-${r}`)])),
      )
      assert.deepEqual(
        results.map((result) => result.status),
        ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
      )
      await groupCommit.drain()
    })
  })
}
