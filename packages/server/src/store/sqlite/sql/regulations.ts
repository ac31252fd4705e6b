/** regulations, their notifications and suppressions on SQLite; erasure in batches. */

import { notificationMessageId } from '../../../domain/delete-notifications.ts'
import { ErasureFailed, type ErasureScope } from '../../../domain/privacy-store.ts'
import {
  type AffectedSourceRow,
  EVERY_SOURCE,
  type NotificationCountRow,
  type NotificationTargetRow,
  planDeleteNotifications,
  type RegulationRow,
  type RegulationsSql,
  type RegulationWork,
  type SuppressionRow,
  toErasureScope,
} from '../../tables/regulations.ts'
import { flag, type SqliteDatabase } from '../database.ts'
import { addGatedCounts } from './destinations.ts'

/** `source_id` within the regulation's sources: `?` is their JSON array, or NULL for every source. */
const IN_SCOPE = '(?1 IS NULL OR source_id IN (SELECT value FROM json_each(?1)))'

/**
 * Messages of the users (`?2`, a JSON array) in scope (`?1`) received up to `?3`: by userId or alias
 * previousId. UNION ALL of disjoint halves, not UNION: a UNION is deduplicated in full before a LIMIT
 * applies, which made every erasure batch read all of a user's messages.
 */
const USERS_MESSAGES = `
  SELECT pk FROM messages WHERE user_id IN (SELECT value FROM json_each(?2)) AND ${IN_SCOPE} AND received_at <= ?3
  UNION ALL
  SELECT pk FROM messages WHERE previous_id IN (SELECT value FROM json_each(?2)) AND ${IN_SCOPE} AND received_at <= ?3
    AND (user_id IS NULL OR user_id NOT IN (SELECT value FROM json_each(?2)))`

/**
 * The deletion requests created at or after `since` (normally none: an index range from the oldest
 * receive time of the calls being stored). Read inside the transaction that stores calls: this store
 * is the only writer, so a request either committed before it (and is seen here) or commits after it
 * (and its erasure scan sees those calls). What they cover is withheld (privacy-store.ts
 * `erasedOnArrival`).
 */
export function sqliteErasuresSince(db: SqliteDatabase): (since: number) => ErasureScope[] {
  return (since) =>
    (
      db
        .sql(
          `SELECT id, subject_ids, source_ids, created_at FROM regulations
           WHERE created_at >= ? AND type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE')`,
        )
        .all(since) as unknown as RegulationRow[]
    ).map(toErasureScope)
}

export function sqliteRegulations(db: SqliteDatabase): RegulationsSql {
  const rows = (text: string, ...params: (string | number | null)[]) =>
    db.sql(text).all(...params) as unknown as RegulationRow[]

  const suppress = (row: RegulationRow, work: RegulationWork) => {
    const insert = db.sql(
      'INSERT OR REPLACE INTO suppressions (user_id, source_id, regulation_id, created_at) VALUES (?, ?, ?, ?)',
    )
    for (const userId of work.userIds) {
      for (const sourceId of work.sourceIds ?? [EVERY_SOURCE])
        insert.run(userId, sourceId, row.id, row.created_at)
    }
  }

  const unsuppress = (work: RegulationWork) => {
    const remove = db.sql(`DELETE FROM suppressions WHERE user_id = ?2 AND ${IN_SCOPE}`)
    const scope = work.sourceIds === null ? null : JSON.stringify(work.sourceIds)
    for (const userId of work.userIds) remove.run(scope, userId)
  }

  /** Cancels unsent deliveries of the users' messages, then queues the `delete` notifications. */
  const notify = (row: RegulationRow, work: RegulationWork): number => {
    const scope = work.sourceIds === null ? null : JSON.stringify(work.sourceIds)
    const users = JSON.stringify(work.userIds)
    // Deleted, not marked: a cancelled delivery must never be sent, and its message goes with the erasure.
    db.sql(
      `DELETE FROM deliveries WHERE status IN ('pending', 'retrying') AND message_pk IN (${USERS_MESSAGES})`,
    ).run(scope, users, row.created_at)
    const affected = db
      .sql(
        `SELECT DISTINCT user_id, source_id FROM messages WHERE user_id IN (SELECT value FROM json_each(?2)) AND ${IN_SCOPE}
         UNION
         SELECT DISTINCT previous_id, source_id FROM messages WHERE previous_id IN (SELECT value FROM json_each(?2)) AND ${IN_SCOPE}`,
      )
      .all(scope, users) as unknown as AffectedSourceRow[]
    if (affected.length === 0) return 0
    const targets = db
      .sql(
        `SELECT ds.destination_id, ds.source_id, d.routing, d.updated_at FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
         WHERE d.enabled = 1 AND d.type = 'webhooks'`,
      )
      .all() as unknown as NotificationTargetRow[]
    const insertMessage = db.sql(
      `INSERT INTO messages (source_id, message_id, type, received_at, payload) VALUES (?, ?, 'delete', ?, ?)`,
    )
    const insertDelivery = db.sql(
      `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, 'pending', ?, ?, ?)`,
    )
    const link = db.sql(
      'INSERT INTO regulation_deliveries (regulation_id, delivery_id, destination_id) VALUES (?, ?, ?)',
    )
    let queued = 0
    const { planned: notifications, gated } = planDeleteNotifications(affected, targets, row.created_at)
    addGatedCounts(db, gated)
    notifications.forEach((planned, index) => {
      const now = row.created_at
      const messagePk = insertMessage.run(
        planned.sourceId,
        notificationMessageId(row.id, index),
        now,
        planned.payloadJson,
      ).lastInsertRowid
      for (const destinationId of planned.destinationIds) {
        const deliveryId = insertDelivery.run(messagePk, destinationId, now, now, now).lastInsertRowid
        link.run(row.id, deliveryId, destinationId)
        queued++
      }
    })
    return queued
  }

  return {
    create: (row, work) =>
      db.transaction(() => {
        db.sql(
          `INSERT INTO regulations (id, type, subject_ids, source_ids, status, created_at, finished_at, erasure_pending, erased_messages, outcome)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          row.id,
          row.type,
          row.subject_ids,
          row.source_ids,
          row.status,
          row.created_at,
          row.finished_at,
          flag(Boolean(row.erasure_pending)),
          row.erased_messages,
          row.outcome,
        )
        if (work.suppress) suppress(row, work)
        if (work.unsuppress) unsuppress(work)
        return work.notify ? notify(row, work) : 0
      }),
    get: (id) => rows('SELECT * FROM regulations WHERE id = ?', id)[0],
    list: (status, limit) =>
      status === undefined
        ? rows('SELECT * FROM regulations ORDER BY created_at DESC, id DESC LIMIT +?', limit)
        : rows(
            'SELECT * FROM regulations WHERE status = ? ORDER BY created_at DESC, id DESC LIMIT +?',
            status,
            limit,
          ),
    notificationCounts: (ids) =>
      db
        .sql(
          `SELECT rd.regulation_id, rd.destination_id, d.status, COUNT(*) AS n
           FROM regulation_deliveries rd JOIN deliveries d ON d.id = rd.delivery_id
           WHERE rd.regulation_id IN (SELECT value FROM json_each(?))
           GROUP BY rd.regulation_id, rd.destination_id, d.status`,
        )
        .all(JSON.stringify(ids)) as unknown as NotificationCountRow[],
    suppressions: () =>
      db.sql('SELECT * FROM suppressions ORDER BY user_id, source_id').all() as unknown as SuppressionRow[],
    version: () =>
      db.sql('SELECT COUNT(*) AS n, MAX(created_at) AS newest FROM regulations').get() as {
        n: number
        newest: number | null
      },
    recentErasures: (since) =>
      rows(
        `SELECT * FROM regulations WHERE type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE')
         AND (created_at >= ? OR erasure_pending = 1) ORDER BY created_at`,
        since,
      ),
    // Not fsynced: a batch lost to a power cut takes its progress (erasure_pending, the count) with it,
    // so it is simply erased again; the fsyncs stay free for ingest and delivery commits.
    eraseNext: (limit, skip) =>
      db.withoutFsync(() =>
        db.transaction(() => {
          const row = rows(
            `SELECT * FROM regulations WHERE erasure_pending = 1
             AND id NOT IN (SELECT value FROM json_each(?)) ORDER BY created_at, id LIMIT 1`,
            JSON.stringify(skip),
          )[0]
          if (!row) return null
          try {
            // Deliveries and their attempts go by FK cascade.
            const erased = Number(
              db
                .sql(`DELETE FROM messages WHERE pk IN (SELECT pk FROM (${USERS_MESSAGES}) LIMIT +?4)`)
                .run(row.source_ids, row.subject_ids, row.created_at, limit).changes,
            )
            const done = erased < limit
            db.sql(
              'UPDATE regulations SET erased_messages = erased_messages + ?, erasure_pending = ? WHERE id = ?',
            ).run(erased, flag(!done), row.id)
            return { id: row.id, erased, done }
          } catch (error) {
            throw new ErasureFailed(row.id, error)
          }
        }),
      ),
    profileErasuresDue: () =>
      rows(
        `SELECT * FROM regulations WHERE type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE')
         AND erasure_pending = 0 AND erased_profiles IS NULL ORDER BY created_at`,
      ),
    recordErasedProfiles(id, count) {
      db.sql(
        'UPDATE regulations SET erased_profiles = MAX(COALESCE(erased_profiles, 0), ?) WHERE id = ?',
      ).run(count, id)
    },
    unfinished: () => rows('SELECT * FROM regulations WHERE finished_at IS NULL ORDER BY created_at'),
    setStatus(id, status, finishedAt, outcome) {
      db.sql('UPDATE regulations SET status = ?, finished_at = ?, outcome = ? WHERE id = ?').run(
        status,
        finishedAt,
        outcome,
        id,
      )
    },
  }
}
