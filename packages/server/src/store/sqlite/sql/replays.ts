/** replays and deliveries.replay_id on SQLite. */
import type { ReplayCandidateRow, ReplayCountRow, ReplayRow, ReplaysSql } from '../../tables/replays.ts'
import { flag, type SqliteDatabase } from '../database.ts'

const WAITING = "status IN ('pending', 'retrying')"

export function sqliteReplays(db: SqliteDatabase): ReplaysSql {
  const list = (values: readonly (string | number)[]) => JSON.stringify(values)
  const finalCounts = `delivered = (SELECT count(*) FROM deliveries WHERE replay_id = replays.id AND status = 'delivered'),
    failed = (SELECT count(*) FROM deliveries WHERE replay_id = replays.id AND status = 'failed')`
  return {
    insert(row) {
      db.sql(
        `INSERT INTO replays (id, destination_id, source_ids, from_at, to_at, types, events, forced, status,
           scan_done, cursor_at, cursor_pk, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'RUNNING', 0, ?, 0, ?)`,
      ).run(
        row.id,
        row.destination_id,
        row.source_ids,
        row.from_at,
        row.to_at,
        row.types,
        row.events,
        flag(Boolean(row.forced)),
        row.cursor_at,
        row.created_at,
      )
    },
    list: (destinationId) =>
      db
        .sql('SELECT * FROM replays WHERE destination_id = ? ORDER BY created_at DESC, id DESC')
        .all(destinationId) as unknown as ReplayRow[],
    get: (id) => db.sql('SELECT * FROM replays WHERE id = ?').get(id) as unknown as ReplayRow | undefined,
    counts: (ids) =>
      db
        .sql(
          `SELECT replay_id, status, count(*) AS n FROM deliveries
           WHERE replay_id IN (SELECT value FROM json_each(?)) AND status IN ('delivered', 'failed')
           GROUP BY replay_id, status`,
        )
        .all(list(ids)) as unknown as ReplayCountRow[],
    lease: (runner, now, leaseUntil) =>
      db
        .sql(
          `UPDATE replays SET runner = ?, lease_until = ?
           WHERE status = 'RUNNING' AND (runner = ? OR lease_until IS NULL OR lease_until <= ?)
           RETURNING *`,
        )
        .all(runner, leaseUntil, runner, now) as unknown as ReplayRow[],
    candidates: (sourceIds, to, cursorAt, cursorPk, limit) =>
      db
        .sql(
          `SELECT pk, received_at, payload FROM messages
           WHERE received_at >= ? AND received_at < ? AND NOT (received_at = ? AND pk <= ?)
             AND source_id IN (SELECT value FROM json_each(?))
           ORDER BY received_at, pk LIMIT +?`,
        )
        .all(cursorAt, to, cursorAt, cursorPk, list(sourceIds), limit) as unknown as ReplayCandidateRow[],
    step: (step, now) =>
      db.transaction(() => {
        const replay = db
          .sql(
            `UPDATE replays SET cursor_at = ?, cursor_pk = ?, scan_done = ?, scanned = scanned + ?,
               matched = matched + ?, lease_until = ?
             WHERE id = ? AND runner = ? AND status = 'RUNNING' AND cursor_at = ? AND cursor_pk = ?
             RETURNING destination_id, forced`,
          )
          .get(
            step.to.receivedAt,
            step.to.pk,
            flag(step.scanDone),
            step.scanned,
            step.matched.length,
            step.leaseUntil,
            step.replayId,
            step.runner,
            step.from.receivedAt,
            step.from.pk,
          ) as { destination_id: string; forced: number } | undefined
        if (!replay) return null
        if (step.matched.length === 0) return { enqueued: 0, skipped: 0 }
        // Skipped: the destination has the call delivered, or waiting to be (live or replayed).
        const { changes } = db
          .sql(
            `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at, replay_id)
             SELECT m.pk, ?, 'pending', ?, ?, ?, ? FROM messages m
             WHERE m.pk IN (SELECT value FROM json_each(?))
               AND (? = 1 OR NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = m.pk AND d.destination_id = ?
                 AND d.status IN ('delivered', 'pending', 'retrying')))
             ORDER BY m.pk`,
          )
          .run(
            replay.destination_id,
            now,
            now,
            now,
            step.replayId,
            list(step.matched),
            replay.forced,
            replay.destination_id,
          )
        const enqueued = Number(changes)
        const skipped = step.matched.length - enqueued
        db.sql('UPDATE replays SET enqueued = enqueued + ?, skipped = skipped + ? WHERE id = ?').run(
          enqueued,
          skipped,
          step.replayId,
        )
        return { enqueued, skipped }
      }),
    outstanding: (replayId) =>
      (
        db.sql(`SELECT count(*) AS n FROM deliveries WHERE replay_id = ? AND ${WAITING}`).get(replayId) as {
          n: number
        }
      ).n,
    liveDue: (destinationId, now, batching) =>
      db
        .sql(
          batching
            ? `SELECT 1 FROM delivery_batches b WHERE b.destination_id = ? AND b.${WAITING} AND b.next_attempt_at <= ?
                 AND (b.lease_until IS NULL OR b.lease_until <= ?)
                 AND EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id AND d.replay_id IS NULL) LIMIT 1`
            : `SELECT 1 FROM deliveries WHERE destination_id = ? AND ${WAITING} AND next_attempt_at <= ?
                 AND replay_id IS NULL AND batch_id IS NULL AND (lease_until IS NULL OR lease_until <= ?) LIMIT 1`,
        )
        .get(destinationId, now, now) !== undefined,
    finish: (id, runner, now) =>
      Number(
        db
          .sql(
            `UPDATE replays SET status = 'FINISHED', finished_at = ?, lease_until = NULL, ${finalCounts}
             WHERE id = ? AND runner = ? AND status = 'RUNNING' AND scan_done = 1
               AND NOT EXISTS (SELECT 1 FROM deliveries WHERE replay_id = replays.id AND ${WAITING})`,
          )
          .run(now, id, runner).changes,
      ) > 0,
    fail(id, error, now) {
      db.sql(
        `UPDATE replays SET status = 'FAILED', error = ?, finished_at = ?, lease_until = NULL, ${finalCounts}
         WHERE id = ? AND status = 'RUNNING'`,
      ).run(error, now, id)
    },
    cancel: (destinationId, id, now) =>
      db.transaction(() => {
        const found = db
          .sql('SELECT status FROM replays WHERE id = ? AND destination_id = ?')
          .get(id, destinationId)
        if (found === undefined) return undefined
        db.sql(
          `UPDATE replays SET status = 'CANCELLED', finished_at = ?, lease_until = NULL WHERE id = ? AND status = 'RUNNING'`,
        ).run(now, id)
        // What waits unleased goes now; what is leased (being sent) is left to its sender, which
        // either finishes it or, seeing the replay stopped, discards it.
        db.sql(
          `DELETE FROM deliveries WHERE replay_id = ? AND ${WAITING} AND (lease_until IS NULL OR lease_until <= ?)
             AND (batch_id IS NULL OR batch_id NOT IN (SELECT id FROM delivery_batches WHERE lease_until > ?))`,
        ).run(id, now, now)
        // Same order as on PostgreSQL (what is still being sent, then the final counts); one SQLite
        // transaction sees no outcome land in between anyway.
        const { n } = db
          .sql(`SELECT count(*) AS n FROM deliveries WHERE replay_id = ? AND ${WAITING}`)
          .get(id) as { n: number }
        db.sql(`UPDATE replays SET ${finalCounts} WHERE id = ? AND status = 'CANCELLED'`).run(id)
        return { leased: n }
      }),
    stopped: (ids) =>
      (
        db
          .sql(`SELECT id FROM replays WHERE id IN (SELECT value FROM json_each(?)) AND status <> 'RUNNING'`)
          .all(list(ids)) as { id: string }[]
      ).map((row) => row.id),
  }
}
