/**
 * source_rollups on both stores: the ingest commit keeps them (stored calls only, by minute of receipt),
 * upgrading a store that already holds calls (migration 006) fills them from those calls, and on
 * PostgreSQL the sweep adds a settled minute's shard rows into one.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore, withAdmin } from './pg.ts'
import { upgradeBackends } from './upgrade-backends.ts'

const HOUR = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000

function message(sourceId: string, messageId: string, receivedAt: number): AcceptedMessage {
  return {
    sourceId,
    messageId,
    type: 'track',
    receivedAt,
    routeTo: [],
    payloadJson: JSON.stringify({ type: 'track', event: 'E', messageId }),
  }
}

const backends = upgradeBackends('sluice-rollups')

for (const backend of backends) {
  describe(`source rollups (${backend.name})`, () => {
    test('each commit adds its stored calls per source and minute; duplicates add nothing; deleting the source removes them', async () => {
      const { store, destroy } = await backend.open()
      try {
        const a = await store.createSource({ name: 'A', enabled: true })
        const b = await store.createSource({ name: 'B', enabled: true })
        await store.ingest([
          message(a.id, 'm-1', HOUR + 1_000),
          message(a.id, 'm-1', HOUR + 2_000),
          message(b.id, 'm-1', HOUR + 3_000),
          message(a.id, 'm-2', HOUR + 61_000),
        ])
        // A second commit into the same minutes, with a repeat of a stored call.
        await store.ingest([message(a.id, 'm-2', HOUR + 62_000), message(a.id, 'm-3', HOUR + 59_999)])
        assert.deepEqual(await store.sourceMinutes(a.id, HOUR, HOUR + 3_600_000), [
          { minute: HOUR, accepted: 2 },
          { minute: HOUR + 60_000, accepted: 1 },
        ])
        assert.deepEqual(await store.sourceMinutes(b.id, HOUR, HOUR + 3_600_000), [
          { minute: HOUR, accepted: 1 },
        ])
        // The range is [from, to), by minute.
        assert.deepEqual(await store.sourceMinutes(a.id, HOUR + 60_000, HOUR + 120_000), [
          { minute: HOUR + 60_000, accepted: 1 },
        ])
        assert.deepEqual(await store.sourceMinutes(a.id, HOUR, HOUR + 60_000), [
          { minute: HOUR, accepted: 2 },
        ])
        // They go with their source.
        assert.equal(await store.deleteSource(a.id), true)
        assert.deepEqual(await store.sourceMinutes(a.id, HOUR, HOUR + 3_600_000), [])
        assert.equal((await store.sourceMinutes(b.id, HOUR, HOUR + 3_600_000)).length, 1)
      } finally {
        await store.close()
        await destroy()
      }
    })

    test('upgrading a store that holds calls fills the figures from them', async () => {
      const { store, downgradeAndReopen, destroy } = await backend.open()
      let reopened: Store | null = null
      try {
        const a = await store.createSource({ name: 'A', enabled: true })
        await store.ingest([
          message(a.id, 'm-1', HOUR + 5_000),
          message(a.id, 'm-2', HOUR + 6_000),
          message(a.id, 'm-3', HOUR + 10 * 60_000),
        ])
        await store.close()
        reopened = await downgradeAndReopen(
          (table) =>
            `DROP TABLE ${table('source_rollups')}; DELETE FROM ${table('schema_migrations')} WHERE version = 6`,
        )
        assert.deepEqual(await reopened.sourceMinutes(a.id, HOUR, HOUR + 3_600_000), [
          { minute: HOUR, accepted: 2 },
          { minute: HOUR + 10 * 60_000, accepted: 1 },
        ])
      } finally {
        await reopened?.close()
        await destroy()
      }
    })
  })
}

describe('source rollups (PostgreSQL): the sweep folds settled shards', () => {
  test("a minute over an hour old keeps one row, with the same figure; a recent minute's shards stay", async () => {
    const { schema, drop } = await freshSchema()
    const store = await openPgStore(schema)
    try {
      const a = await store.createSource({ name: 'A', enabled: true })
      const recent = Math.floor(Date.now() / 60_000) * 60_000
      await store.ingest([message(a.id, 'm-1', HOUR + 1_000), message(a.id, 'm-2', recent + 1)])
      // What several API processes ingesting at once leave: more shards of the same minutes. The recent
      // minute gets two shards of its own, so it has at least two rows whichever shard the ingest drew.
      await withAdmin((client) =>
        client.query(
          `INSERT INTO ${schema}.source_rollups (source_id, minute, shard, accepted)
           VALUES ($1, $2, 3, 5), ($1, $2, 7, 2), ($1, $3, 9, 4), ($1, $3, 10, 0)
           ON CONFLICT (source_id, minute, shard) DO UPDATE SET accepted = source_rollups.accepted + EXCLUDED.accepted`,
          [a.id, HOUR, recent],
        ),
      )
      const before = await store.sourceMinutes(a.id, HOUR, recent + 60_000)
      assert.deepEqual(before, [
        { minute: HOUR, accepted: 8 },
        { minute: recent, accepted: 5 },
      ])
      await store.sweep(0)
      assert.deepEqual(await store.sourceMinutes(a.id, HOUR, recent + 60_000), before)
      const rows = await withAdmin(async (client) =>
        (
          await client.query<{ minute: string; n: string }>(
            `SELECT minute, count(*) AS n FROM ${schema}.source_rollups GROUP BY minute ORDER BY minute`,
          )
        ).rows.map((row) => [Number(row.minute), Number(row.n)]),
      )
      assert.equal(rows[0]![0], HOUR)
      assert.equal(rows[0]![1], 1, 'the settled minute is one row')
      assert.ok(rows[1]![1]! >= 2, 'the recent minute keeps its shards')
    } finally {
      await store.close()
      await drop()
    }
  })
})
