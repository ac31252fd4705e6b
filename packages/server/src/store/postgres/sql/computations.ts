import type { PoolClient } from 'pg'
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
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { addGatedCounts } from './destinations.ts'
import { ERASED_BY, ERASING_CTE, HOLD_ERASURE_BARRIER } from './regulations.ts'

/**
 * Queues the profiles `select` yields (one column of profile ids) for evaluation. Every mark takes a
 * new seq from profile_dirty_seq (the column's default), a number no entry has had before. An
 * evaluation commits only while the entries it read keep the seq it read, so an entry another process
 * has evaluated and a new call has queued again MUST NOT come back with an old number.
 */
export const queueProfiles = (select: string): string =>
  `INSERT INTO profile_dirty (profile_id) SELECT DISTINCT id FROM (${select}) AS marked (id)
     ON CONFLICT (profile_id) DO UPDATE SET seq = EXCLUDED.seq`

/**
 * Queues the profiles a computation's backfill covers, after moving the profile cursor's version (the
 * cursor is the lock consuming takes first). A batch of calls being consumed meanwhile either committed
 * before this (its profiles exist and are queued here) or fails its cursor check and is planned again,
 * against the new computation. Locking the cursor without moving it is not enough: a batch planned
 * before the computation committed (reading no such computation, so marking none of its profiles) and
 * applied after it would create profiles that neither queued, evaluated only at their next call.
 */
async function queue(client: PoolClient, scope: QueueScope): Promise<void> {
  if (scope === 'none') return
  await client.query('UPDATE profile_cursor SET version = version + 1')
  if (scope === 'all') {
    await client.query(queueProfiles('SELECT id FROM profiles'))
  } else {
    await client.query(queueProfiles('SELECT profile_id FROM profile_events WHERE event = ANY($1::text[])'), [
      scope.events.map((event) => pgText(event)),
    ])
  }
}

/**
 * Computed traits on PostgreSQL. Several processes may evaluate the same queued profile; the queue
 * entry's delete, first in the transaction, lets one commit (the other waits on the row lock, finds the
 * entry gone, or queued again under another seq, and rolls back), so a value is never sent twice.
 */
export function postgresComputations(db: PostgresDatabase): ComputationsSql {
  const byProfiles = <Row extends object>(table: string, profileIds: string[]) =>
    db.query<Row & Record<string, unknown>>(`SELECT * FROM ${table} WHERE profile_id = ANY($1::text[])`, [
      profileIds,
    ])
  return {
    list: () => db.query<ComputationRow>('SELECT * FROM computations ORDER BY created_at, id'),
    get: async (id) =>
      (await db.query<ComputationRow>('SELECT * FROM computations WHERE id = $1', [pgText(id)]))[0],
    insert: (row, scope) =>
      db.transaction(async (client) => {
        const inserted = await client.query(
          `INSERT INTO computations (id, class, name, key, definition, destination_ids, status, last_sync_at,
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (key) DO NOTHING`,
          [
            row.id,
            row.class,
            pgText(row.name),
            row.key,
            pgText(row.definition),
            row.destination_ids,
            row.status,
            row.last_sync_at,
            row.created_at,
            row.updated_at,
          ],
        )
        if ((inserted.rowCount ?? 0) === 0) return false
        await queue(client, scope)
        return true
      }),
    update: (id, change, scope, read) =>
      db.transaction(async (client) => {
        const updated = await client.query(
          `UPDATE computations SET name = $2, destination_ids = $3, definition = $4,
             status = CASE WHEN $5::text = $9::text THEN status ELSE $5 END,
             error = CASE WHEN $5::text = $9::text THEN error ELSE $6 END,
             updated_at = $7 WHERE id = $1 AND updated_at = $8`,
          [
            pgText(id),
            pgText(change.name),
            change.destination_ids,
            pgText(change.definition),
            change.status,
            change.error === null ? null : pgText(change.error),
            change.updated_at,
            read.updated_at,
            read.status,
          ],
        )
        if ((updated.rowCount ?? 0) === 0) return false
        await queue(client, scope)
        return true
      }),
    delete: async (id) =>
      (
        await db.query<{ n: number }>(
          `WITH v AS (DELETE FROM computed_values WHERE computation_id = $1),
             s AS (DELETE FROM computed_sent WHERE computation_id = $1),
             c AS (DELETE FROM computations WHERE id = $1 RETURNING 1)
           SELECT count(*)::int AS n FROM c`,
          [pgText(id)],
        )
      )[0]!.n > 0,
    markLive: (ids) =>
      db.transaction(async (client) => {
        // The rows first: a change committing its backfill right now is waited for here. The check
        // below is a new statement, so it sees the profiles that change queued. In one statement the
        // row would be re-read after the wait, but the queue as it was before: live with a backfill due.
        await client.query(
          "SELECT id FROM computations WHERE status = 'computing' AND id = ANY($1::text[]) ORDER BY id FOR UPDATE",
          [ids],
        )
        await client.query(
          "UPDATE computations SET status = 'live' WHERE status = 'computing' AND id = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM profile_dirty)",
          [ids],
        )
      }),
    size: async (id) =>
      (
        await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM computed_values WHERE computation_id = $1',
          [pgText(id)],
        )
      )[0]!.n,
    holders: async (id, afterId, limit) =>
      (
        await db.query<{ profile_id: string }>(
          `SELECT profile_id FROM computed_values WHERE computation_id = $1 AND ($2::text IS NULL OR profile_id > $2)
           ORDER BY profile_id LIMIT $3`,
          [pgText(id), afterId === null ? null : pgText(afterId), limit],
        )
      ).map((row) => row.profile_id),
    async markDirty(profileIds) {
      await db.run(queueProfiles('SELECT unnest($1::text[])'), [profileIds])
    },
    profilesWithEventsBetween: async (event, after, upTo) =>
      (
        await db.query<{ profile_id: string }>(
          'SELECT DISTINCT profile_id FROM profile_events WHERE event = $1 AND occurred_at > $2 AND occurred_at <= $3',
          [pgText(event), after, upTo],
        )
      ).map((row) => row.profile_id),
    dirty: (limit) => db.query<DirtyRow>('SELECT profile_id, seq FROM profile_dirty LIMIT $1', [limit]),
    eventsOf: (profileIds, events) =>
      db.query<MarkedEventRow>(
        `SELECT *, consumed_version AS mark FROM profile_events
          WHERE profile_id = ANY($1::text[]) AND event = ANY($2::text[])`,
        [profileIds, events.map((event) => pgText(event))],
      ),
    eventsAfter: (marks, events) =>
      db.query<MarkedEventRow>(
        `SELECT e.*, e.consumed_version AS mark
           FROM unnest($1::text[], $2::bigint[]) AS m (profile_id, after)
           JOIN profile_events AS e ON e.profile_id = m.profile_id AND e.consumed_version > m.after
          WHERE e.event = ANY($3::text[])`,
        [marks.map(([id]) => id), marks.map(([, after]) => after), events.map((event) => pgText(event))],
      ),
    values: (profileIds) => byProfiles<ValueRow>('computed_values', profileIds),
    sent: (profileIds) => byProfiles<SentRow>('computed_sent', profileIds),
    apply: async (writes) => {
      try {
        // A deadlock between two processes deleting overlapping entries is retried by the transaction
        // (and then stale).
        return await applyEvaluation(writes)
      } catch (error) {
        if (error instanceof StaleEvaluation) return false
        throw error
      }
    },
  }

  function applyEvaluation(writes: EvaluationWrites): Promise<boolean> {
    return db.transaction(async (client) => {
      // Identify calls are stored below: the erasure barrier's shared lock first, before this
      // transaction holds any row lock, so that it never waits behind the barrier holding one.
      if (writes.messages.length > 0) await client.query(`SELECT ${HOLD_ERASURE_BARRIER}`)
      const done = await client.query(
        `DELETE FROM profile_dirty d USING unnest($1::text[], $2::bigint[]) AS e(profile_id, seq)
           WHERE d.profile_id = e.profile_id AND d.seq = e.seq`,
        [writes.done.map((row) => row.profile_id), writes.done.map((row) => row.seq)],
      )
      // Already evaluated elsewhere, or marked again since: this evaluation is stale.
      if ((done.rowCount ?? 0) !== writes.done.length) throw new StaleEvaluation()
      const { setValues, clearValues, sent, messages, failed, now } = writes
      await addGatedCounts(client, sumGatedCalls(writes.gated))
      if (failed.length > 0) {
        await client.query(
          `UPDATE computations c SET status = 'failed', error = f.error
             FROM unnest($1::text[], $2::text[]) AS f(id, error) WHERE c.id = f.id`,
          [failed.map((row) => row.computation_id), failed.map((row) => pgText(row.error))],
        )
      }
      await client.query(
        `INSERT INTO computed_values (computation_id, profile_id, value)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
           ON CONFLICT (computation_id, profile_id) DO UPDATE SET value = EXCLUDED.value`,
        [
          setValues.map((r) => r.computation_id),
          setValues.map((r) => r.profile_id),
          setValues.map((r) => pgText(r.value)),
        ],
      )
      await client.query(
        `DELETE FROM computed_values v USING unnest($1::text[], $2::text[]) AS c(computation_id, profile_id)
           WHERE v.computation_id = c.computation_id AND v.profile_id = c.profile_id`,
        [clearValues.map((r) => r.computation_id), clearValues.map((r) => r.profile_id)],
      )
      await client.query(
        `INSERT INTO computed_sent (computation_id, destination_id, profile_id, value)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
           ON CONFLICT (computation_id, destination_id, profile_id) DO UPDATE SET value = EXCLUDED.value`,
        [
          sent.map((r) => r.computation_id),
          sent.map((r) => r.destination_id),
          sent.map((r) => r.profile_id),
          sent.map((r) => pgText(r.value)),
        ],
      )
      await client.query('UPDATE computations SET last_sync_at = $2 WHERE id = ANY($1::text[])', [
        [...new Set(messages.map((message) => message.computation_id))],
        now,
      ])
      if (messages.length > 0) {
        const targets = messages.flatMap((message) =>
          message.destination_ids.map((id) => [message.message_id, id]),
        )
        await client.query(
          // Of a user a deletion request committed since `now` covers: not stored (as calls are not).
          `WITH ${ERASING_CTE('$4')},
           stored AS (
               INSERT INTO messages (source_id, message_id, type, received_at, payload, user_id)
               SELECT $1, message_id, 'identify', $4, payload, user_id
                 FROM unnest($2::text[], $3::text[], $7::text[]) AS m(message_id, payload, user_id)
               WHERE NOT ${ERASED_BY({ sourceId: '$1', receivedAt: '$4::bigint', userId: 'm.user_id', previousId: 'NULL' })}
               RETURNING pk, message_id)
             INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
             SELECT s.pk, t.destination_id, 'pending', $4, $4, $4
             FROM unnest($5::text[], $6::text[]) AS t(message_id, destination_id) JOIN stored s USING (message_id)`,
          [
            COMPUTED_SOURCE_ID,
            messages.map((m) => m.message_id),
            messages.map((m) => pgText(m.payload)),
            now,
            targets.map(([messageId]) => messageId),
            targets.map(([, destinationId]) => destinationId),
            messages.map((m) => (m.user_id === null ? null : pgText(m.user_id))),
          ],
        )
      }
      return true
    })
  }
}
