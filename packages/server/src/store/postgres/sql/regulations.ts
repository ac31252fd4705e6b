/**
 * regulations, their notifications and suppressions on PostgreSQL; erasure in batches. Several
 * processes may erase at once: each takes a different regulation (FOR UPDATE SKIP LOCKED), one batch
 * per transaction.
 */
import type { PoolClient } from 'pg'
import { notificationMessageId } from '../../../domain/delete-notifications.ts'
import { ErasureFailed } from '../../../domain/privacy-store.ts'
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
} from '../../tables/regulations.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { addGatedCounts } from './destinations.ts'

/** `source_id` within the regulation's sources: `$2` is their array, or NULL for every source. */
const IN_SCOPE = '($2::text[] IS NULL OR source_id = ANY ($2::text[]))'

/**
 * Messages of the users (`$1`) in scope (`$2`) received up to `$3`: by userId or alias previousId.
 * UNION ALL of disjoint halves, not UNION, so a LIMIT stops reading early.
 */
const USERS_MESSAGES = `
  SELECT pk FROM messages WHERE user_id = ANY ($1::text[]) AND ${IN_SCOPE} AND received_at <= $3
  UNION ALL
  SELECT pk FROM messages WHERE previous_id = ANY ($1::text[]) AND ${IN_SCOPE} AND received_at <= $3
    AND (user_id IS NULL OR user_id <> ALL ($1::text[]))`

const texts = (ids: string[]): string[] => ids.map((id) => pgText(id))

/** The erasure barrier's advisory lock, per schema (the same expression as in 022_erasure_barrier.sql). */
const ERASURE_BARRIER_KEY = "hashtext('sluice.erasure-barrier:' || current_schema())"

/** Takes the erasure barrier's shared lock until the transaction ends (as sluice_erasures_since does). */
export const HOLD_ERASURE_BARRIER = `pg_advisory_xact_lock_shared(${ERASURE_BARRIER_KEY})`

/**
 * A CTE `erasing` (created_at, users, sources): the deletion requests created at or after `since` (a
 * bigint parameter), read by sluice_erasures_since (022_erasure_barrier.sql) once it holds the erasure
 * barrier's shared lock, which the statement's transaction keeps until it commits. Every statement
 * that stores calls (or Sluice's own identify calls) MUST read it before it writes them and store none
 * it covers (`ERASED_BY`): the barrier that each erasure batch takes first then guarantees that a call
 * received before a request is either seen by the batch or withheld here.
 */
export const ERASING_CTE = (since: string): string => `erasing AS MATERIALIZED (
  SELECT e.created_at, ARRAY(SELECT jsonb_array_elements_text(e.subject_ids::jsonb)) AS users,
    CASE WHEN e.source_ids IS NULL THEN NULL
      ELSE ARRAY(SELECT jsonb_array_elements_text(e.source_ids::jsonb)) END AS sources
  FROM sluice_erasures_since(${since}::bigint) e
)`

/**
 * Whether a request in `erasing` covers the call (privacy-store.ts `erasureCovers`); the call's fields
 * as SQL expressions. `erasing` is nearly always empty: that is asked once a statement (an uncorrelated
 * subquery, which also runs the function for the statement's first row), and only otherwise per call.
 */
export const ERASED_BY = (call: {
  sourceId: string
  receivedAt: string
  userId: string
  previousId: string
}): string => `(EXISTS (SELECT 1 FROM erasing) AND EXISTS (SELECT 1 FROM erasing e
  WHERE ${call.receivedAt} <= e.created_at
  AND (e.sources IS NULL OR ${call.sourceId} = ANY (e.sources))
  AND (${call.userId} = ANY (e.users) OR ${call.previousId} = ANY (e.users))))`

/** Cancels unsent deliveries of the users' messages, then queues the `delete` notifications. */
async function notify(client: PoolClient, row: RegulationRow, work: RegulationWork): Promise<number> {
  const scope = [texts(work.userIds), work.sourceIds && texts(work.sourceIds), row.created_at]
  // Deleted, not marked: a cancelled delivery must never be sent, and its message goes with the erasure.
  await client.query(
    // Locked in id order first, as outcome commits lock them: the two wait for each other, never deadlock.
    `WITH locked AS (
       SELECT id FROM deliveries WHERE status IN ('pending', 'retrying') AND message_pk IN (${USERS_MESSAGES})
       ORDER BY id FOR UPDATE),
     cancelled AS (
       DELETE FROM deliveries WHERE id IN (SELECT id FROM locked) AND status IN ('pending', 'retrying')
       RETURNING id)
     DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM cancelled)`,
    scope,
  )
  const affected = (
    await client.query<AffectedSourceRow>(
      `SELECT DISTINCT user_id, source_id FROM messages WHERE user_id = ANY ($1::text[]) AND ${IN_SCOPE}
       UNION
       SELECT DISTINCT previous_id, source_id FROM messages WHERE previous_id = ANY ($1::text[]) AND ${IN_SCOPE}`,
      scope.slice(0, 2),
    )
  ).rows
  if (affected.length === 0) return 0
  // FOR KEY SHARE: a destination deleted meanwhile waits for this transaction (there is no FK).
  const targets = (
    await client.query<NotificationTargetRow>(
      `SELECT ds.destination_id, ds.source_id, d.routing, d.updated_at FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
       WHERE d.enabled AND d.type = 'webhooks' FOR KEY SHARE OF d`,
    )
  ).rows
  const { planned, gated } = planDeleteNotifications(affected, targets, row.created_at)
  await addGatedCounts(client, gated)
  if (planned.length === 0) return 0
  const stored = (
    await client.query<{ pk: string; message_id: string }>(
      `INSERT INTO messages (source_id, message_id, type, received_at, payload)
       SELECT source_id, message_id, 'delete', $4, payload
       FROM unnest($1::text[], $2::text[], $3::text[]) AS i(source_id, message_id, payload)
       RETURNING pk, message_id`,
      [
        planned.map((each) => each.sourceId),
        planned.map((_, index) => notificationMessageId(row.id, index)),
        planned.map((each) => pgText(each.payloadJson)),
        row.created_at,
      ],
    )
  ).rows
  const pkOf = new Map(stored.map((each) => [each.message_id, each.pk]))
  const messagePks: string[] = []
  const destinationIds: string[] = []
  planned.forEach((each, index) => {
    for (const destinationId of each.destinationIds) {
      messagePks.push(pkOf.get(notificationMessageId(row.id, index))!)
      destinationIds.push(destinationId)
    }
  })
  const created = await client.query(
    `WITH created AS (
       INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
       SELECT m, d, 'pending', $3, $3, $3 FROM unnest($1::bigint[], $2::text[]) AS t(m, d)
       RETURNING id, destination_id)
     INSERT INTO regulation_deliveries (regulation_id, delivery_id, destination_id)
     SELECT $4, id, destination_id FROM created`,
    [messagePks, destinationIds, row.created_at, row.id],
  )
  return created.rowCount ?? 0
}

/** How long an erasure batch waits at the barrier before it gives up until the next pass. */
const BARRIER_WAIT = '1s'

/**
 * The erasure barrier (022_erasure_barrier.sql), passed after the request is chosen and before its
 * calls are scanned: waits until every statement that was storing calls has committed, so the scan
 * (a later statement, so a later snapshot) sees their calls, and every statement storing calls from
 * now on sees the request. Taken and let go in ONE statement: a session lock that an error between two
 * statements left held would stop every ingest of the database. New ingests queue behind a waiting
 * barrier, so it waits at most BARRIER_WAIT (one stuck ingest must not hold up all the others); the
 * request is then tried again on the next pass.
 */
async function passErasureBarrier(client: PoolClient): Promise<void> {
  const key = ERASURE_BARRIER_KEY
  const { rows } = await client.query<{ previous: string }>(
    `SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', '${BARRIER_WAIT}', true)`,
  )
  try {
    await client.query(`SELECT pg_advisory_unlock(${key}) FROM (SELECT pg_advisory_lock(${key})) AS taken`)
  } catch (error) {
    if ((error as { code?: string }).code !== '55P03') throw error
    throw new Error(
      `the erasure waited ${BARRIER_WAIT} for calls being stored right now to commit (a statement storing calls is held up, e.g. behind a source being deleted); it is tried again on the next pass`,
      { cause: error },
    )
  }
  await client.query("SELECT set_config('lock_timeout', $1, true)", [rows[0]!.previous])
}

/** One batch of a regulation's erasure, in the transaction that chose it. */
async function eraseBatch(
  client: PoolClient,
  row: RegulationRow,
  limit: number,
): Promise<{ id: string; erased: number; done: boolean }> {
  const scope = [JSON.parse(row.subject_ids), row.source_ids && JSON.parse(row.source_ids), row.created_at]
  // Lock the batch's deliveries first: waits for outcomes being recorded right now, so that their
  // attempt rows are visible to the DELETE (a later statement); later outcomes find the rows gone.
  const pks = (await client.query<{ pk: string }>(`${USERS_MESSAGES} LIMIT $4`, [...scope, limit])).rows.map(
    (each) => each.pk,
  )
  await client.query(
    'SELECT id FROM deliveries WHERE message_pk = ANY ($1::bigint[]) ORDER BY id FOR UPDATE',
    [pks],
  )
  await client.query(
    `WITH gone AS (DELETE FROM messages WHERE pk = ANY ($1::bigint[]) RETURNING pk),
       deliveries_gone AS (DELETE FROM deliveries WHERE message_pk IN (SELECT pk FROM gone) RETURNING id)
     DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries_gone)`,
    [pks],
  )
  const erased = pks.length
  const done = erased < limit
  await client.query(
    'UPDATE regulations SET erased_messages = erased_messages + $2, erasure_pending = $3 WHERE id = $1',
    [row.id, erased, !done],
  )
  return { id: row.id, erased, done }
}

export function postgresRegulations(db: PostgresDatabase): RegulationsSql {
  const rows = (text: string, values: unknown[] = []) => db.query<RegulationRow>(text, values)
  return {
    create: (row, work) =>
      db.transaction(async (client) => {
        await client.query(
          `INSERT INTO regulations (id, type, subject_ids, source_ids, status, created_at, finished_at, erasure_pending, erased_messages, outcome)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            row.id,
            row.type,
            pgText(row.subject_ids),
            pgText(row.source_ids),
            row.status,
            row.created_at,
            row.finished_at,
            Boolean(row.erasure_pending),
            row.erased_messages,
            row.outcome,
          ],
        )
        const users = texts(work.userIds)
        const sources = work.sourceIds && texts(work.sourceIds)
        if (work.suppress) {
          await client.query(
            `INSERT INTO suppressions (user_id, source_id, regulation_id, created_at)
             SELECT u, s, $3, $4 FROM unnest($1::text[]) AS u CROSS JOIN unnest($2::text[]) AS s
             ON CONFLICT (user_id, source_id) DO UPDATE
               SET regulation_id = EXCLUDED.regulation_id, created_at = EXCLUDED.created_at`,
            [users, sources ?? [EVERY_SOURCE], row.id, row.created_at],
          )
        }
        if (work.unsuppress) {
          await client.query(`DELETE FROM suppressions WHERE user_id = ANY ($1::text[]) AND ${IN_SCOPE}`, [
            users,
            sources,
          ])
        }
        return work.notify ? notify(client, row, work) : 0
      }),
    get: async (id) => (await rows('SELECT * FROM regulations WHERE id = $1', [pgText(id)]))[0],
    list: (status, limit) =>
      rows(
        `SELECT * FROM regulations WHERE ($1::text IS NULL OR status = $1)
         ORDER BY created_at DESC, id DESC LIMIT $2`,
        [status ?? null, limit],
      ),
    notificationCounts: (ids) =>
      db.query<NotificationCountRow>(
        `SELECT rd.regulation_id, rd.destination_id, d.status, count(*)::int AS n
         FROM regulation_deliveries rd JOIN deliveries d ON d.id = rd.delivery_id
         WHERE rd.regulation_id = ANY ($1::text[])
         GROUP BY rd.regulation_id, rd.destination_id, d.status`,
        [ids],
      ),
    suppressions: () => db.query<SuppressionRow>('SELECT * FROM suppressions ORDER BY user_id, source_id'),
    version: async () =>
      (
        await db.query<{ n: number; newest: number | null }>(
          'SELECT count(*)::int AS n, max(created_at) AS newest FROM regulations',
        )
      )[0]!,
    recentErasures: (since) =>
      rows(
        `SELECT * FROM regulations WHERE type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE')
         AND (created_at >= $1 OR erasure_pending) ORDER BY created_at`,
        [since],
      ),
    eraseNext: (limit, skip) =>
      db.transaction(async (client) => {
        // No wait for the WAL flush: a batch lost to a crash takes its progress (erasure_pending, the
        // count) with it and is simply erased again.
        await client.query("SELECT set_config('synchronous_commit', 'off', true)")
        const row = (
          await client.query<RegulationRow>(
            `SELECT * FROM regulations WHERE erasure_pending AND NOT (id = ANY ($1::text[]))
             ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
            [[...skip]],
          )
        ).rows[0]
        if (!row) return null
        try {
          await passErasureBarrier(client)
          return await eraseBatch(client, row, limit)
        } catch (error) {
          throw new ErasureFailed(row.id, error)
        }
      }),
    profileErasuresDue: () =>
      rows(
        `SELECT * FROM regulations WHERE type IN ('DELETE_ONLY', 'SUPPRESS_WITH_DELETE')
         AND NOT erasure_pending AND erased_profiles IS NULL ORDER BY created_at`,
        [],
      ),
    async recordErasedProfiles(id, count) {
      await db.query(
        'UPDATE regulations SET erased_profiles = GREATEST(COALESCE(erased_profiles, 0), $2) WHERE id = $1',
        [id, count],
      )
    },
    unfinished: () => rows('SELECT * FROM regulations WHERE finished_at IS NULL ORDER BY created_at'),
    async setStatus(id, status, finishedAt, outcome) {
      await db.query('UPDATE regulations SET status = $2, finished_at = $3, outcome = $4 WHERE id = $1', [
        id,
        status,
        finishedAt,
        outcome,
      ])
    },
  }
}
