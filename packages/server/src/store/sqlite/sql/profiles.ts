import type { MessageRow } from '../../tables/messages.ts'
import type {
  IdentityRow,
  ProfileCursorRow,
  ProfileEventRow,
  ProfileRow,
  ProfilesSql,
} from '../../tables/profiles.ts'
import { placeholders, ROWS_PER_STATEMENT, type SqliteDatabase } from '../database.ts'
import type { IngestHandoff } from '../ingest-handoff.ts'
import { type Param, QUEUE_PROFILES, statementHelpers } from './statement-helpers.ts'

/** A profile's computed state, removed when the profile goes (merged away or erased). */
const COMPUTED_STATE = ['computed_values', 'computed_sent', 'profile_dirty']

/**
 * profiles, profile_identities, profile_merges, profile_events and profile_cursor. Lists travel as JSON.
 * `handoff`: the rows ingest just stored, read from memory instead of the log when it holds them.
 */
export function sqliteProfiles(db: SqliteDatabase, handoff: IngestHandoff): ProfilesSql {
  const { all, run } = statementHelpers(db)
  /**
   * The calls after `afterPk` as ingest handed them over, if it holds the next ones and every one of
   * them is still stored (a row is never changed, only deleted): counting a pk range reads no row.
   */
  const handedOver = (afterPk: number, limit: number): MessageRow[] | null => {
    const rows = handoff.take(afterPk, limit)
    if (rows === null) return null
    const { n } = db
      .sql('SELECT count(*) AS n FROM messages WHERE pk > ? AND pk <= ?')
      .get(afterPk, rows.at(-1)!.pk) as { n: number }
    if (n === rows.length) return rows
    handoff.clear()
    return null
  }
  const bumpVersion = () => run('UPDATE profile_cursor SET version = version + 1')
  return {
    cursor: () =>
      db.sql('SELECT high_pk, gaps, version FROM profile_cursor').get() as unknown as ProfileCursorRow,
    messages: (afterPk, upToPk, limit) =>
      (upToPk === null ? handedOver(afterPk, limit) : null) ??
      all<MessageRow>(
        'SELECT * FROM messages WHERE pk > ? AND (? IS NULL OR pk <= ?) ORDER BY pk LIMIT +?',
        afterPk,
        upToPk,
        upToPk,
        limit,
      ),
    identities: (kind, values) =>
      all<IdentityRow>(
        'SELECT * FROM profile_identities WHERE kind = ? AND value IN (SELECT value FROM json_each(?))',
        kind,
        JSON.stringify(values),
      ),
    identitiesOf: (profileIds) =>
      all<IdentityRow>(
        'SELECT * FROM profile_identities WHERE profile_id IN (SELECT value FROM json_each(?))',
        JSON.stringify(profileIds),
      ),
    profiles: (ids) =>
      all<ProfileRow>(
        'SELECT * FROM profiles WHERE id IN (SELECT value FROM json_each(?))',
        JSON.stringify(ids),
      ),
    page: (afterId, limit) =>
      all<ProfileRow>(
        'SELECT * FROM profiles WHERE ? IS NULL OR id > ? ORDER BY id LIMIT +?',
        afterId,
        afterId,
        limit,
      ),
    search: (text, limit) =>
      all<{ profile_id: string }>(
        `SELECT DISTINCT profile_id FROM profile_identities WHERE instr(value, ?) > 0
         ORDER BY profile_id LIMIT +?`,
        text,
        limit,
      ).map((row) => row.profile_id),
    resolve: (id) =>
      (
        db
          .sql(
            `SELECT id FROM profiles WHERE id = ?1
             UNION ALL SELECT into_id FROM profile_merges WHERE from_id = ?1 LIMIT 1`,
          )
          .get(id) as { id: string } | undefined
      )?.id,
    apply: (writes) =>
      db.withoutFsync(() =>
        db.transaction(() => {
          const { cursor } = writes
          // First: a batch planned on a cursor another writer has moved since is not applied at all.
          const moved = run(
            'UPDATE profile_cursor SET high_pk = ?, gaps = ?, version = version + 1 WHERE version = ?',
            cursor.highPk,
            cursor.gaps,
            cursor.readVersion,
          )
          if (moved === 0) return false
          for (const { from_id, into_id } of writes.merges) {
            run('UPDATE profile_identities SET profile_id = ? WHERE profile_id = ?', into_id, from_id)
            run('UPDATE profile_events SET profile_id = ? WHERE profile_id = ?', into_id, from_id)
            run('UPDATE profile_merges SET into_id = ? WHERE into_id = ?', into_id, from_id)
            run('INSERT OR REPLACE INTO profile_merges (from_id, into_id) VALUES (?, ?)', from_id, into_id)
            run('DELETE FROM profiles WHERE id = ?', from_id)
            for (const table of COMPUTED_STATE) run(`DELETE FROM ${table} WHERE profile_id = ?`, from_id)
          }
          for (const profile of writes.profiles) {
            run(
              'INSERT OR REPLACE INTO profiles (id, traits, trait_times, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
              profile.id,
              profile.traits,
              profile.trait_times,
              profile.first_seen_at,
              profile.last_seen_at,
            )
          }
          for (const identity of writes.identities) {
            run(
              'INSERT OR REPLACE INTO profile_identities (kind, value, profile_id, linked_at) VALUES (?, ?, ?, ?)',
              identity.kind,
              identity.value,
              identity.profile_id,
              identity.linked_at,
            )
          }
          // Up to ROWS_PER_STATEMENT rows a statement: per-statement overhead was most of their cost.
          for (let at = 0; at < writes.events.length; at += ROWS_PER_STATEMENT) {
            const chunk = writes.events.slice(at, at + ROWS_PER_STATEMENT)
            const values: Param[] = []
            for (const event of chunk) {
              values.push(
                event.message_pk,
                event.profile_id,
                event.source_id,
                event.message_id,
                event.type,
                event.event,
                event.occurred_at,
                event.properties,
              )
            }
            run(
              `INSERT OR IGNORE INTO profile_events
               (message_pk, profile_id, source_id, message_id, type, event, occurred_at, properties)
             VALUES ${placeholders(chunk.length, '(?, ?, ?, ?, ?, ?, ?, ?)')}`,
              ...values,
            )
          }
          if (writes.dirty.length > 0) {
            run(QUEUE_PROFILES, JSON.stringify(writes.dirty))
          }
          return true
        }),
      ),
    events: (profileId, limit, beforePk) =>
      all<ProfileEventRow>(
        `SELECT * FROM profile_events WHERE profile_id = ? AND (? IS NULL OR message_pk < ?)
         ORDER BY message_pk DESC LIMIT +?`,
        profileId,
        beforePk,
        beforePk,
        limit,
      ),
    erase: (userIds, sourceIds) =>
      db.transaction(() => {
        const doomed = all<{ id: string }>(
          `SELECT DISTINCT i.profile_id AS id FROM profile_identities i
           WHERE i.kind = 'user' AND i.value IN (SELECT value FROM json_each(?1))
             AND (?2 IS NULL OR EXISTS (SELECT 1 FROM profile_events e WHERE e.profile_id = i.profile_id
               AND e.source_id IN (SELECT value FROM json_each(?2))))`,
          JSON.stringify(userIds),
          sourceIds === null ? null : JSON.stringify(sourceIds),
        ).map((row) => row.id)
        if (doomed.length === 0) return 0
        const ids = JSON.stringify(doomed)
        for (const table of ['profile_identities', 'profile_events', ...COMPUTED_STATE]) {
          run(`DELETE FROM ${table} WHERE profile_id IN (SELECT value FROM json_each(?))`, ids)
        }
        run('DELETE FROM profile_merges WHERE into_id IN (SELECT value FROM json_each(?))', ids)
        run('DELETE FROM profiles WHERE id IN (SELECT value FROM json_each(?))', ids)
        // A batch planned before the erasure would write the profiles back: it must fail its cursor check.
        bumpVersion()
        return doomed.length
      }),
  }
}
