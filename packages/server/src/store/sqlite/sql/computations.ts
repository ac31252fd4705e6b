import { erasedOnArrival } from '../../../domain/privacy-store.ts'
import {
  COMPUTED_SOURCE_ID,
  type ComputationRow,
  type ComputationsSql,
  type DirtyRow,
  type EvaluationWrites,
  type MarkedEventRow,
  type QueueScope,
  type SentRow,
  StaleEvaluation,
  type ValueRow,
} from '../../tables/computations.ts'
import { sumGatedCalls } from '../../tables/destinations.ts'
import type { SqliteDatabase } from '../database.ts'
import { addGatedCounts } from './destinations.ts'
import { sqliteErasuresSince } from './regulations.ts'
import { QUEUE_PROFILES, statementHelpers } from './statement-helpers.ts'

/** Queues a profile again when it is queued already. */
const REQUEUE = 'ON CONFLICT (profile_id) DO UPDATE SET seq = profile_dirty.seq + 1'

/** computations, profile_dirty, computed_values, computed_sent; sync messages and their deliveries. */
export function sqliteComputations(db: SqliteDatabase): ComputationsSql {
  const erasuresSince = sqliteErasuresSince(db)
  const { all, run } = statementHelpers(db)
  const queue = (scope: QueueScope) => {
    if (scope === 'none') return
    // A batch of calls planned before this computation (marking none of its profiles) must not apply
    // after it, creating profiles the backfill below cannot see: moving the cursor's version fails its
    // check, and it is planned again. (The server's store thread runs one call at a time; a store used
    // in-thread may interleave them.)
    run('UPDATE profile_cursor SET version = version + 1')
    if (scope === 'all') {
      run(`INSERT INTO profile_dirty (profile_id, seq) SELECT id, 1 FROM profiles WHERE true ${REQUEUE}`)
      return
    }
    run(
      `INSERT INTO profile_dirty (profile_id, seq) SELECT DISTINCT profile_id, 1 FROM profile_events
         WHERE event IN (SELECT value FROM json_each(?)) ${REQUEUE}`,
      JSON.stringify(scope.events),
    )
  }
  return {
    list: () => all<ComputationRow>('SELECT * FROM computations ORDER BY created_at, id'),
    get: (id) => db.sql('SELECT * FROM computations WHERE id = ?').get(id) as ComputationRow | undefined,
    insert: (row, scope) =>
      db.transaction(() => {
        const inserted = run(
          `INSERT INTO computations (id, class, name, key, definition, destination_ids, status, last_sync_at,
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
          row.id,
          row.class,
          row.name,
          row.key,
          row.definition,
          row.destination_ids,
          row.status,
          row.last_sync_at,
          row.created_at,
          row.updated_at,
        )
        if (inserted === 0) return false
        queue(scope)
        return true
      }),
    update: (id, change, scope, read) =>
      db.transaction(() => {
        const found = run(
          `UPDATE computations SET name = ?1, destination_ids = ?2, definition = ?3,
             status = CASE WHEN ?4 = ?9 THEN status ELSE ?4 END,
             error = CASE WHEN ?4 = ?9 THEN error ELSE ?5 END,
             updated_at = ?6 WHERE id = ?7 AND updated_at = ?8`,
          change.name,
          change.destination_ids,
          change.definition,
          change.status,
          change.error,
          change.updated_at,
          id,
          read.updated_at,
          read.status,
        )
        if (found === 0) return false
        queue(scope)
        return true
      }),
    delete: (id) =>
      db.transaction(() => {
        run('DELETE FROM computed_values WHERE computation_id = ?', id)
        run('DELETE FROM computed_sent WHERE computation_id = ?', id)
        return run('DELETE FROM computations WHERE id = ?', id) > 0
      }),
    markLive(ids) {
      run(
        "UPDATE computations SET status = 'live' WHERE status = 'computing' AND id IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM profile_dirty)",
        JSON.stringify(ids),
      )
    },
    size: (id) =>
      (db.sql('SELECT count(*) AS n FROM computed_values WHERE computation_id = ?').get(id) as { n: number })
        .n,
    holders: (id, afterId, limit) =>
      all<{ profile_id: string }>(
        `SELECT profile_id FROM computed_values WHERE computation_id = ? AND (? IS NULL OR profile_id > ?)
         ORDER BY profile_id LIMIT +?`,
        id,
        afterId,
        afterId,
        limit,
      ).map((row) => row.profile_id),
    markDirty(profileIds) {
      run(QUEUE_PROFILES, JSON.stringify(profileIds))
    },
    profilesWithEventsBetween: (event, after, upTo) =>
      all<{ profile_id: string }>(
        'SELECT DISTINCT profile_id FROM profile_events WHERE event = ? AND occurred_at > ? AND occurred_at <= ?',
        event,
        after,
        upTo,
      ).map((row) => row.profile_id),
    dirty: (limit) => all<DirtyRow>('SELECT profile_id, seq FROM profile_dirty LIMIT +?', limit),
    // `+event`: look the calls up by profile (a few each), never by event (every profile's).
    eventsOf: (profileIds, events) =>
      all<MarkedEventRow>(
        `SELECT *, message_pk AS mark FROM profile_events WHERE profile_id IN (SELECT value FROM json_each(?))
           AND +event IN (SELECT value FROM json_each(?))`,
        JSON.stringify(profileIds),
        JSON.stringify(events),
      ),
    eventsAfter: (marks, events) =>
      all<MarkedEventRow>(
        `SELECT e.*, e.message_pk AS mark FROM json_each(?) AS m
           JOIN profile_events AS e
             ON e.profile_id = m.value ->> 0 AND e.message_pk > m.value ->> 1
          WHERE +e.event IN (SELECT value FROM json_each(?))`,
        JSON.stringify(marks),
        JSON.stringify(events),
      ),
    values: (profileIds) =>
      all<ValueRow>(
        'SELECT * FROM computed_values WHERE profile_id IN (SELECT value FROM json_each(?))',
        JSON.stringify(profileIds),
      ),
    sent: (profileIds) =>
      all<SentRow>(
        'SELECT * FROM computed_sent WHERE profile_id IN (SELECT value FROM json_each(?))',
        JSON.stringify(profileIds),
      ),
    apply: (writes) => {
      try {
        return applyEvaluation(writes)
      } catch (error) {
        if (error instanceof StaleEvaluation) return false
        throw error
      }
    },
  }

  function applyEvaluation(writes: EvaluationWrites): boolean {
    const json = (rows: unknown[][]) => JSON.stringify(rows)
    return db.withoutFsync(() =>
      db.transaction(() => {
        const done = run(
          `DELETE FROM profile_dirty WHERE (profile_id, seq) IN
           (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
          json(writes.done.map((row) => [row.profile_id, row.seq])),
        )
        // Already evaluated elsewhere, or marked again since: this evaluation is stale.
        if (done !== writes.done.length) throw new StaleEvaluation()
        const { setValues, clearValues, sent, messages, failed, now } = writes
        addGatedCounts(db, sumGatedCalls(writes.gated))
        for (const { computation_id, error } of failed) {
          run("UPDATE computations SET status = 'failed', error = ? WHERE id = ?", error, computation_id)
        }
        if (setValues.length > 0) {
          run(
            `INSERT OR REPLACE INTO computed_values (computation_id, profile_id, value)
             SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)`,
            json(setValues.map((row) => [row.computation_id, row.profile_id, row.value])),
          )
        }
        if (clearValues.length > 0) {
          run(
            `DELETE FROM computed_values WHERE (computation_id, profile_id) IN
             (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
            json(clearValues.map((row) => [row.computation_id, row.profile_id])),
          )
        }
        if (sent.length > 0) {
          run(
            `INSERT OR REPLACE INTO computed_sent (computation_id, destination_id, profile_id, value)
             SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`,
            json(sent.map((row) => [row.computation_id, row.destination_id, row.profile_id, row.value])),
          )
        }
        if (messages.length > 0) {
          run(
            'UPDATE computations SET last_sync_at = ? WHERE id IN (SELECT value FROM json_each(?))',
            now,
            JSON.stringify([...new Set(messages.map((message) => message.computation_id))]),
          )
        }
        // Of a user a deletion request committed since `now` covers: not stored (as calls are not).
        const erased = erasedOnArrival(
          messages.length > 0 ? erasuresSince(now) : [],
          messages.map((message) => ({
            sourceId: COMPUTED_SOURCE_ID,
            receivedAt: now,
            userId: message.user_id,
          })),
        )
        for (const [index, message] of messages.entries()) {
          if (erased?.has(index)) continue
          const { pk } = db
            .sql(
              `INSERT INTO messages (source_id, message_id, type, received_at, payload, user_id)
               VALUES (?, ?, 'identify', ?, ?, ?) RETURNING pk`,
            )
            .get(COMPUTED_SOURCE_ID, message.message_id, now, message.payload, message.user_id) as {
            pk: number
          }
          run(
            `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
             SELECT ?, value, 'pending', ?, ?, ? FROM json_each(?)`,
            pk,
            now,
            now,
            now,
            JSON.stringify(message.destination_ids),
          )
        }
        return true
      }),
    )
  }
}
