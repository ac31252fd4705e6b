/** delivery_batches, batch_attempts and deliveries.batch_id on SQLite. */
import type { SQLInputValue } from 'node:sqlite'
import type { FormedBatch } from '../../../domain/delivery-store.ts'
import type {
  BatchAttemptRow,
  BatchClaimRow,
  BatchMemberRow,
  CandidateRow,
  DeliveryBatchesSql,
} from '../../tables/delivery-batches.ts'
import { flag, type SqliteDatabase } from '../database.ts'

/** Walks the due index (ties come in rowid order), so a read stops after its limit. */
const UNBATCHED_DUE = `d.destination_id = ? AND d.status IN ('pending', 'retrying') AND d.batch_id IS NULL
  AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)`

/** A candidate's columns, in the order `candidates` selects them. */
type CandidateColumns = [
  CandidateRow['id'],
  CandidateRow['next_attempt_at'],
  CandidateRow['replay_id'],
  CandidateRow['attempt_count'],
  CandidateRow['first_attempt_at'],
  CandidateRow['closed_urls'],
  CandidateRow['payload'],
  CandidateRow['source_id'],
  CandidateRow['received_at'],
]

export function sqliteDeliveryBatches(db: SqliteDatabase): DeliveryBatchesSql {
  const ids = (list: number[]) => JSON.stringify(list)
  return {
    candidates: (destinationId, limit, now) => {
      const statement = db.sql(
        `SELECT d.id, d.next_attempt_at, d.replay_id, d.attempt_count, d.first_attempt_at, d.closed_urls,
           m.payload, m.source_id, m.received_at
         FROM deliveries d JOIN messages m ON m.pk = d.message_pk
         WHERE ${UNBATCHED_DUE} ORDER BY d.next_attempt_at LIMIT +?`,
      )
      // Rows as arrays, made objects here: node:sqlite builds an object row property by property,
      // which took a third more of the read than this (thousands of rows per look).
      statement.setReturnArrays(true)
      const rows = statement.all(destinationId, now, now, limit) as unknown as CandidateColumns[]
      return rows.map(
        (row): CandidateRow => ({
          id: row[0],
          next_attempt_at: row[1],
          replay_id: row[2],
          attempt_count: row[3],
          first_attempt_at: row[4],
          closed_urls: row[5],
          payload: row[6],
          source_id: row[7],
          received_at: row[8],
        }),
      )
    },
    form: (destinationId, groups, now, leaseUntil) =>
      db.transaction(() => {
        const insert = db.sql(
          `INSERT INTO delivery_batches (destination_id, status, next_attempt_at, lease_until, created_at, updated_at)
           VALUES (?, 'pending', ?, ?, ?, ?) RETURNING id`,
        )
        // The condition makes joining a batch happen once per delivery, whoever forms batches. Its
        // `+` keeps the planner on the ids: walking the due index instead reads every due delivery of
        // the destination for each batch formed. `status` is set apart, on the few members that were
        // retrying: a column in the SET list rewrites every index entry that holds it, even unchanged.
        // A member keeps its due time: with its batch_id set it leaves the due index (which holds
        // deliveries in no batch only), and its batch's row says when it is due from now on.
        // No RETURNING: it buffers every changed row and hands each over as an object (~2 µs a
        // member). When every id of the group joined, the members are the group; else they are read.
        const join = db.sql(
          `UPDATE deliveries AS d SET batch_id = ?, updated_at = ?
           WHERE d.id IN (SELECT value FROM json_each(?)) AND +${UNBATCHED_DUE}`,
        )
        const members = db.sql('SELECT id FROM deliveries WHERE batch_id = ? ORDER BY id')
        const pend = db.sql(
          "UPDATE deliveries SET status = 'pending' WHERE batch_id = ? AND status = 'retrying'",
        )
        const drop = db.sql('DELETE FROM delivery_batches WHERE id = ?')
        const kept: FormedBatch[] = []
        for (const group of groups) {
          const { id } = insert.get(destinationId, now, leaseUntil, now, now) as { id: number }
          const joined = Number(join.run(id, now, ids(group), destinationId, now, now).changes)
          if (joined === 0) {
            drop.run(id)
            continue
          }
          pend.run(id)
          const memberIds =
            joined === group.length
              ? group.toSorted((a, b) => a - b)
              : (members.all(id) as { id: number }[]).map((row) => row.id)
          kept.push({ id, memberIds })
        }
        return kept
      }),
    claim: (destinationId, limit, now, leaseUntil) =>
      db.transaction(() => {
        const batches = db
          .sql(
            `UPDATE delivery_batches SET lease_until = ?, updated_at = ?
             WHERE id IN (
               SELECT id FROM delivery_batches
               WHERE destination_id = ? AND status IN ('pending', 'retrying') AND next_attempt_at <= ?
                 AND (lease_until IS NULL OR lease_until <= ?)
               ORDER BY next_attempt_at, id LIMIT +?)
             RETURNING id, attempt_count, first_attempt_at, closed_urls`,
          )
          .all(leaseUntil, now, destinationId, now, now, limit) as unknown as BatchClaimRow[]
        if (batches.length === 0) return { batches, members: [] }
        const batchIds = ids(batches.map((batch) => batch.id))
        const members = db
          .sql(
            `SELECT d.id, d.batch_id, d.attempt_count, d.first_attempt_at, d.closed_urls, d.replay_id, m.payload, m.source_id, m.received_at
             FROM deliveries d JOIN messages m ON m.pk = d.message_pk
             WHERE d.batch_id IN (SELECT value FROM json_each(?)) ORDER BY d.id`,
          )
          .all(batchIds) as unknown as BatchMemberRow[]
        // Every member erased by a deletion request: nothing is left to send.
        db.sql(
          `DELETE FROM delivery_batches WHERE id IN (SELECT value FROM json_each(?))
             AND NOT EXISTS (SELECT 1 FROM deliveries WHERE batch_id = delivery_batches.id)`,
        ).run(batchIds)
        return { batches, members }
      }),
    record: (rows, attempts, now) =>
      db.transaction(() => {
        const updateBatch = db.sql(
          `UPDATE delivery_batches SET status = ?, dead_lettered = ?, attempt_count = attempt_count + 1,
             next_attempt_at = ?, first_attempt_at = COALESCE(first_attempt_at, ?), closed_urls = ?,
             lease_until = NULL, updated_at = ?
           WHERE id = ? RETURNING destination_id`,
        )
        const updateMembers = db.sql(
          `UPDATE deliveries SET status = ?, dead_lettered = ?, attempt_count = attempt_count + 1,
             next_attempt_at = ?, first_attempt_at = COALESCE(first_attempt_at, ?), closed_urls = ?,
             lease_until = NULL, updated_at = ?
           WHERE batch_id = ?`,
        )
        const insertAttempt = db.sql(
          `INSERT INTO batch_attempts (batch_id, destination_id, attempted_at, url, status_code, error_kind, error_text, latency_ms, response_excerpt)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        const destinations = new Map<number, string>()
        for (const row of rows) {
          const values: SQLInputValue[] = [
            row.status,
            flag(row.deadLettered),
            row.nextAttemptAt,
            row.firstAttemptAt,
            row.closedUrls,
            now,
            row.id,
          ]
          const updated = updateBatch.get(...values) as { destination_id: string } | undefined
          if (!updated) continue // its destination was deleted meanwhile
          destinations.set(row.id, updated.destination_id)
          updateMembers.run(...values)
        }
        for (const { batchId, attempt } of attempts) {
          const destinationId = destinations.get(batchId)
          if (destinationId === undefined) continue
          insertAttempt.run(
            batchId,
            destinationId,
            attempt.attemptedAt,
            attempt.url,
            attempt.statusCode,
            attempt.errorKind,
            attempt.errorText,
            attempt.latencyMs,
            attempt.responseExcerpt,
          )
        }
      }),
    release(batchIds) {
      db.sql(
        'UPDATE delivery_batches SET lease_until = NULL WHERE id IN (SELECT value FROM json_each(?))',
      ).run(ids(batchIds))
    },
    nextDueAt(destinationId, now) {
      const row = db
        .sql(
          `SELECT next_attempt_at AS at FROM delivery_batches
           WHERE destination_id = ? AND status IN ('pending', 'retrying') AND (lease_until IS NULL OR lease_until <= ?)
           ORDER BY next_attempt_at LIMIT 1`,
        )
        .get(destinationId, now) as { at: number } | undefined
      return row?.at ?? null
    },
    openDestinations: () =>
      (
        db
          .sql("SELECT DISTINCT destination_id FROM delivery_batches WHERE status IN ('pending', 'retrying')")
          .all() as { destination_id: string }[]
      ).map((row) => row.destination_id),
    payloadsOf: (batchId) =>
      db
        .sql(
          'SELECT m.payload FROM deliveries d JOIN messages m ON m.pk = d.message_pk WHERE d.batch_id = ? ORDER BY d.id',
        )
        .all(batchId) as unknown as { payload: string }[],
    recentLatencies: (destinationId, limit) =>
      (
        db
          .sql('SELECT latency_ms FROM batch_attempts WHERE destination_id = ? ORDER BY id DESC LIMIT +?')
          .all(destinationId, limit) as { latency_ms: number }[]
      ).map((row) => row.latency_ms),
    attemptsOf: (batchIds) =>
      db
        .sql('SELECT * FROM batch_attempts WHERE batch_id IN (SELECT value FROM json_each(?)) ORDER BY id')
        .all(ids(batchIds)) as unknown as BatchAttemptRow[],
  }
}
