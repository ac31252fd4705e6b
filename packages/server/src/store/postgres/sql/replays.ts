/** replays and deliveries.replay_id on PostgreSQL. */
import type { ReplayCandidateRow, ReplayCountRow, ReplayRow, ReplaysSql } from '../../tables/replays.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/**
 * A destination's turn at deciding which of its calls already have a delivery (a replay step's skip,
 * a bulk replay's once-each): held until the transaction ends, so each sees the other's commit.
 */
export const REPLAY_TURN = "SELECT pg_advisory_xact_lock(hashtext('sluice.replay-step'), hashtext($1))"

const WAITING = "status IN ('pending', 'retrying')"
const FINAL_COUNTS = `delivered = (SELECT count(*) FROM deliveries WHERE replay_id = replays.id AND status = 'delivered'),
  failed = (SELECT count(*) FROM deliveries WHERE replay_id = replays.id AND status = 'failed')`

export function postgresReplays(db: PostgresDatabase): ReplaysSql {
  return {
    insert: async (row) => {
      await db.run(
        `INSERT INTO replays (id, destination_id, source_ids, from_at, to_at, types, events, forced, status,
           scan_done, cursor_at, cursor_pk, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'RUNNING', false, $9, 0, $10)`,
        [
          row.id,
          pgText(row.destination_id),
          pgText(row.source_ids),
          row.from_at,
          row.to_at,
          pgText(row.types),
          pgText(row.events),
          Boolean(row.forced),
          row.cursor_at,
          row.created_at,
        ],
      )
    },
    list: (destinationId) =>
      db.query<ReplayRow>(
        'SELECT * FROM replays WHERE destination_id = $1 ORDER BY created_at DESC, id DESC',
        [pgText(destinationId)],
      ),
    get: async (id) => (await db.query<ReplayRow>('SELECT * FROM replays WHERE id = $1', [pgText(id)]))[0],
    counts: (ids) =>
      db.query<ReplayCountRow>(
        `SELECT replay_id, status, count(*)::int AS n FROM deliveries
         WHERE replay_id = ANY($1::text[]) AND status IN ('delivered', 'failed')
         GROUP BY replay_id, status`,
        [ids],
      ),
    // The row lock makes a second process re-check the condition after the first committed: one
    // runner per replay.
    lease: (runner, now, leaseUntil) =>
      db.query<ReplayRow>(
        `UPDATE replays SET runner = $1, lease_until = $2
         WHERE status = 'RUNNING' AND (runner = $1 OR lease_until IS NULL OR lease_until <= $3)
         RETURNING *`,
        [runner, leaseUntil, now],
      ),
    candidates: (sourceIds, to, cursorAt, cursorPk, limit) =>
      db.query<ReplayCandidateRow>(
        `SELECT pk, received_at, payload FROM messages
         WHERE (received_at, pk) > ($1, $2) AND received_at < $3 AND source_id = ANY($4::text[])
         ORDER BY received_at, pk LIMIT $5`,
        [cursorAt, cursorPk, to, sourceIds, limit],
      ),
    step: (step, now) =>
      db.retrying(() =>
        db.transaction(async (client) => {
          const moved = await client.query<{ destination_id: string; forced: boolean }>(
            `UPDATE replays SET cursor_at = $1, cursor_pk = $2, scan_done = $3, scanned = scanned + $4,
               matched = matched + $5, lease_until = $6
             WHERE id = $7 AND runner = $8 AND status = 'RUNNING' AND cursor_at = $9 AND cursor_pk = $10
             RETURNING destination_id, forced`,
            [
              step.to.receivedAt,
              step.to.pk,
              step.scanDone,
              step.scanned,
              step.matched.length,
              step.leaseUntil,
              step.replayId,
              step.runner,
              step.from.receivedAt,
              step.from.pk,
            ],
          )
          const replay = moved.rows[0]
          if (!replay) return null
          if (step.matched.length === 0) return { enqueued: 0, skipped: 0 }
          // Two replays of one destination stepping over the same calls in two processes would each
          // see the other's deliveries missing and both insert: the call sent twice. Steps of one
          // destination MUST take turns: each waits here for the other's commit, and its INSERT (a
          // new statement, so a new snapshot) then sees what that one enqueued.
          await client.query(REPLAY_TURN, [replay.destination_id])
          // Skipped: the destination has the call delivered, or waiting to be (live or replayed).
          const inserted = await client.query(
            `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at, replay_id)
             SELECT m.pk, $1, 'pending', $2, $2, $2, $3 FROM messages m
             WHERE m.pk = ANY($4::bigint[])
               AND ($5 OR NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = m.pk AND d.destination_id = $1
                 AND d.status IN ('delivered', 'pending', 'retrying')))
             ORDER BY m.pk`,
            [replay.destination_id, now, step.replayId, step.matched, replay.forced],
          )
          const enqueued = inserted.rowCount ?? 0
          const skipped = step.matched.length - enqueued
          await client.query(
            'UPDATE replays SET enqueued = enqueued + $1, skipped = skipped + $2 WHERE id = $3',
            [enqueued, skipped, step.replayId],
          )
          return { enqueued, skipped }
        }),
      ),
    outstanding: async (replayId) =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM deliveries WHERE replay_id = $1 AND ${WAITING}`,
          [pgText(replayId)],
        )
      )[0]!.n,
    liveDue: async (destinationId, now, batching) =>
      (
        await db.query(
          batching
            ? `SELECT 1 FROM delivery_batches b WHERE b.destination_id = $1 AND b.${WAITING} AND b.next_attempt_at <= $2
                 AND (b.lease_until IS NULL OR b.lease_until <= $2)
                 AND EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id AND d.replay_id IS NULL) LIMIT 1`
            : `SELECT 1 FROM deliveries WHERE destination_id = $1 AND ${WAITING} AND next_attempt_at <= $2
                 AND replay_id IS NULL AND (lease_until IS NULL OR lease_until <= $2) LIMIT 1`,
          [pgText(destinationId), now],
        )
      ).length > 0,
    finish: async (id, runner, now) =>
      (await db.run(
        `UPDATE replays SET status = 'FINISHED', finished_at = $1, lease_until = NULL, ${FINAL_COUNTS}
         WHERE id = $2 AND runner = $3 AND status = 'RUNNING' AND scan_done
           AND NOT EXISTS (SELECT 1 FROM deliveries WHERE replay_id = replays.id AND ${WAITING})`,
        [now, id, runner],
      )) > 0,
    fail: async (id, error, now) => {
      await db.run(
        `UPDATE replays SET status = 'FAILED', error = $1, finished_at = $2, lease_until = NULL, ${FINAL_COUNTS}
         WHERE id = $3 AND status = 'RUNNING'`,
        [pgText(error), now, id],
      )
    },
    cancel: (destinationId, id, now) =>
      db.transaction(async (client) => {
        // Locks the replay: a step committing meanwhile waits, then sees it CANCELLED and writes nothing.
        const found = await client.query(
          'SELECT status FROM replays WHERE id = $1 AND destination_id = $2 FOR UPDATE',
          [pgText(id), pgText(destinationId)],
        )
        if (found.rows.length === 0) return undefined
        await client.query(
          `UPDATE replays SET status = 'CANCELLED', finished_at = $1, lease_until = NULL WHERE id = $2 AND status = 'RUNNING'`,
          [now, id],
        )
        // What waits unleased goes now; what is leased (being sent) is left to its sender, which
        // either finishes it or, seeing the replay stopped, discards it.
        await client.query(
          `WITH gone AS (
             DELETE FROM deliveries WHERE replay_id = $1 AND ${WAITING} AND (lease_until IS NULL OR lease_until <= $2)
               AND (batch_id IS NULL OR batch_id NOT IN (SELECT id FROM delivery_batches WHERE lease_until > $2))
             RETURNING id)
           DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone)`,
          [id, now],
        )
        // Count what is still being sent BEFORE the final counts, never after: each statement here sees
        // outcomes committed up to its start, so an outcome landing between the two is then both in the
        // counts and not waiting. The other order could count it as neither, and the caller would stop
        // waiting with a delivered count one short.
        const left = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM deliveries WHERE replay_id = $1 AND ${WAITING}`,
          [id],
        )
        await client.query(`UPDATE replays SET ${FINAL_COUNTS} WHERE id = $1 AND status = 'CANCELLED'`, [id])
        return { leased: left.rows[0]!.n }
      }),
    stopped: async (ids) =>
      (
        await db.query<{ id: string }>(
          `SELECT id FROM replays WHERE id = ANY($1::text[]) AND status <> 'RUNNING'`,
          [ids],
        )
      ).map((row) => row.id),
  }
}
