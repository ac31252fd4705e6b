/**
 * Upgrading a store whose profiles took `delete` notifications in as calls (SQLite and PostgreSQL
 * migration 020): a profile made of deletes alone (an erased user made anew by a delete read after the
 * erasure) goes, with its identities and computed state; a real profile keeps its calls but no delete.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Store } from '../../src/store/store.ts'
import { message } from './contract.ts'
import { type TableName, upgradeBackends } from './upgrade-backends.ts'

/** What profiles held before the upgrade: a profile of one delete, and a delete among a real profile's calls. */
const leftByDeletes = (table: TableName, keptProfileId: string, sourceId: string) => `
  INSERT INTO ${table('profiles')} (id, traits, trait_times, first_seen_at, last_seen_at)
    VALUES ('prf_ghost', '{}', '{}', 1, 1);
  INSERT INTO ${table('profile_identities')} (kind, value, profile_id, linked_at)
    VALUES ('user', 'ghost', 'prf_ghost', 1);
  INSERT INTO ${table('profile_dirty')} (profile_id, seq) VALUES ('prf_ghost', 1);
  INSERT INTO ${table('profile_events')} (message_pk, profile_id, source_id, message_id, type, event, occurred_at, properties)
    VALUES (900001, 'prf_ghost', '${sourceId}', 'reg-1', 'delete', NULL, 1, '{}'),
           (900002, '${keptProfileId}', '${sourceId}', 'reg-2', 'delete', NULL, 2, '{}');
  DELETE FROM ${table('schema_migrations')} WHERE version = 20;`

const backends = upgradeBackends('sluice-profile-deletes')

for (const backend of backends) {
  describe(`profiles without deletes (${backend.name})`, () => {
    test('upgrading removes the profiles made of deletes alone, and every delete among calls', async () => {
      const { store, downgradeAndReopen, destroy } = await backend.open()
      let reopened: Store | null = null
      try {
        const source = await store.createSource({ name: 'A', enabled: true })
        await store.ingest([
          message(source, 'kept-1', {
            userId: 'kept',
            payloadJson: JSON.stringify({
              type: 'track',
              event: 'Signed Up',
              messageId: 'kept-1',
              userId: 'kept',
            }),
          }),
        ])
        while ((await store.consumeIntoProfiles()) > 0);
        const kept = await store.findProfile({ userId: 'kept' })
        assert.ok(kept)
        await store.close()

        reopened = await downgradeAndReopen((table) => leftByDeletes(table, kept.id, source.id))
        assert.equal(await reopened.findProfile({ userId: 'ghost' }), null)
        assert.equal(await reopened.getProfile('prf_ghost'), null)
        const after = await reopened.findProfile({ userId: 'kept' })
        assert.equal(after?.id, kept.id)
        const { events } = await reopened.listProfileEvents(kept.id, { limit: 10 })
        assert.deepEqual(
          events.map((event) => [event.type, event.messageId]),
          [['track', 'kept-1']],
        )
      } finally {
        await reopened?.close()
        await destroy()
      }
    })
  })
}
