/**
 * Ingest on PostgreSQL, the hot write path: the keys, messages, deliveries and counters of one group
 * commit in ONE statement (data-modifying CTEs over `unnest`ed arrays), so a batch costs one round trip
 * and one commit whatever its size. Several API processes ingest concurrently: dedupe is arbitrated by
 * the `dedupe_keys` primary key (SQLite can rely on being the only writer; PostgreSQL cannot).
 */
import { randomInt } from 'node:crypto'
import type { DestinationType } from '../../../domain/destinations.ts'
import type { AcceptedMessage } from '../../../domain/message-store.ts'
import { closedGates, gateOfRow, type RoutingRow } from '../../../route/gates.ts'
import type { IngestSql } from '../../tables/messages.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { ERASED_BY, ERASING_CTE } from './regulations.ts'
import { SOURCE_MINUTES_CTE } from './rollups.ts'
import { COUNTER_SHARDS } from './sources.ts'

const PAYLOAD_SEPARATOR = '\u0001'

/**
 * Payloads travel as ONE text joined by U+0001 and are split by the server (string_to_array), instead
 * of as a text[] literal: pg escapes every element of an array literal in JavaScript, on the event
 * loop, which cost ~5x more than the join for a typical batch. Safe because a payload is JSON text from
 * JSON.stringify, where control characters only ever appear escaped; a payload breaking that rule is a
 * programming error and is refused rather than split in the wrong place.
 */
function packPayloads(payloads: string[]): string {
  for (const payload of payloads) {
    if (payload.includes(PAYLOAD_SEPARATOR) || payload.includes('\u0000')) {
      throw new Error(
        'A payload contains a raw control character: payloadJson must be JSON.stringify output.',
      )
    }
  }
  return payloads.join(PAYLOAD_SEPARATOR)
}

/**
 * Ingest in one statement. Inputs are parallel arrays, one element per message (no two with the same
 * (source, messageId): the caller drops in-batch repeats first), sorted by (source, messageId) so that
 * concurrent ingests take the key locks in the same order.
 *
 * - erasing: the deletion requests created since the batch's oldest call ($15) (regulations.ts
 *   ERASING_CTE). It runs before the statement writes anything, so an ingest holds no row lock of its
 *   own writes while it waits behind the erasure barrier: `input`, which every write reads, asks it for
 *   its first row. A call such a request covers is `erased`: accepted and counted, but neither stored
 *   nor routed.
 * - live_sources / targets: lock the sources and their enabled, connected destinations once per
 *   statement (FOR KEY SHARE: what an FK check would take per row; there are no FKs on these tables,
 *   see 001_init.sql). A concurrent deleteSource / deleteDestination waits for this transaction, and
 *   one that committed first leaves its row out here, so nothing is inserted for it.
 * - keys: claims each (source, messageId). A new key is inserted; an existing one is taken over only if
 *   it is older than the window ($7). Only claimed keys come back, so a key another process holds
 *   inside the window — even one it is committing at this very moment: the unique index makes this
 *   statement wait for that transaction and then see its row — is a duplicate here.
 * - accepted / stored: the messages whose key was claimed. Their pks are drawn up front (input), so
 *   deliveries are built from `accepted` rather than from the INSERT's RETURNING: the planner cannot
 *   estimate a RETURNING's row count and once chose a nested loop over it (quadratic in the batch).
 * - created: their deliveries, to every target whose type the router allowed. Decided in the same
 *   transaction as the message, so a crash cannot lose one.
 * - counted: accepted/duplicate counters, in a random shard ($11) to keep API processes off each
 *   other's row locks.
 * - source_minutes: the per-minute figures of the sources' charts (rollups.ts).
 * - gated: what destinations' subscriptions and filters kept out ($14: per message, the destinations it
 *   does not go to, as "id=f" (filtered) or "id=s" (sampled out), decided before the statement by
 *   route/gates.ts), counted per destination for the accepted messages, in the same random shard.
 */
const INGEST_SQL = `
WITH ${ERASING_CTE('$15')},
input AS MATERIALIZED (
  SELECT i.*, nextval('messages_pk_seq') AS pk,
    ${ERASED_BY({ sourceId: 'i.source_id', receivedAt: 'i.received_at', userId: 'i.user_id', previousId: 'i.previous_id' })} AS erased
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], string_to_array($5::text, chr(1)), $6::text[],
      $12::text[], $13::text[], $14::text[])
    WITH ORDINALITY AS i(source_id, message_id, received_at, type, payload, route_to, user_id, previous_id, closed, ord)
),
live_sources AS (
  SELECT id FROM sources WHERE id = ANY ($9::text[]) ORDER BY id FOR KEY SHARE
),
targets AS (
  SELECT ds.source_id, d.id, d.type
  FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
  WHERE ds.source_id IN (SELECT id FROM live_sources) AND d.enabled
  ORDER BY d.id
  FOR KEY SHARE OF d
),
keys AS (
  INSERT INTO dedupe_keys AS k (source_id, message_id, received_at)
  SELECT source_id, message_id, received_at FROM input
  WHERE source_id IN (SELECT id FROM live_sources)
  ORDER BY ord
  ON CONFLICT (source_id, message_id) DO UPDATE SET received_at = EXCLUDED.received_at
    WHERE k.received_at <= $7
  RETURNING k.source_id, k.message_id
),
accepted AS MATERIALIZED (
  SELECT i.* FROM input i JOIN keys USING (source_id, message_id)
),
stored AS (
  INSERT INTO messages (pk, source_id, message_id, type, received_at, payload, user_id, previous_id)
  SELECT pk, source_id, message_id, type, received_at, payload, user_id, previous_id FROM accepted
  WHERE NOT erased ORDER BY ord
),
created AS (
  INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
  SELECT a.pk, t.id, 'pending', $8, $8, $8
  FROM accepted a JOIN targets t ON t.source_id = a.source_id
  WHERE NOT a.erased AND t.type = ANY (string_to_array(a.route_to, ','))
    AND (a.closed = '' OR NOT (
      t.id || '=f' = ANY (string_to_array(a.closed, ',')) OR t.id || '=s' = ANY (string_to_array(a.closed, ','))))
  ORDER BY a.pk, t.id
  RETURNING 1
),
gated AS (
  INSERT INTO destination_counters AS g (destination_id, shard, filtered, sampled_out)
  SELECT x.id, $11, count(*) FILTER (WHERE x.verdict = 'f'), count(*) FILTER (WHERE x.verdict = 's')
  FROM accepted a
  CROSS JOIN LATERAL unnest(string_to_array(a.closed, ',')) AS c(entry)
  CROSS JOIN LATERAL (SELECT split_part(c.entry, '=', 1) AS id, split_part(c.entry, '=', 2) AS verdict) x
  WHERE a.closed <> '' AND x.id IN (SELECT id FROM targets)
  GROUP BY x.id
  ORDER BY x.id
  ON CONFLICT (destination_id, shard) DO UPDATE
    SET filtered = g.filtered + EXCLUDED.filtered, sampled_out = g.sampled_out + EXCLUDED.sampled_out
),
counted AS (
  INSERT INTO source_counters AS c (source_id, shard, accepted, duplicates)
  SELECT t.source_id, $11, COALESCE(a.n, 0), t.total - COALESCE(a.n, 0)
  FROM unnest($9::text[], $10::int[]) AS t(source_id, total)
  LEFT JOIN (SELECT source_id, count(*)::int AS n FROM keys GROUP BY source_id) a USING (source_id)
  WHERE t.source_id IN (SELECT id FROM live_sources)
  ORDER BY t.source_id
  ON CONFLICT (source_id, shard) DO UPDATE
    SET accepted = c.accepted + EXCLUDED.accepted, duplicates = c.duplicates + EXCLUDED.duplicates
),
${SOURCE_MINUTES_CTE}
SELECT (SELECT count(*) FROM created) AS deliveries,
       (SELECT COALESCE(array_agg(ord::int), '{}') FROM accepted) AS accepted`

/** Enabled destinations connected to the sources, with their settings, for the gates. */
const GATED_TARGETS_SQL = `
SELECT ds.source_id, d.id, d.type, d.routing, d.updated_at
FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
WHERE ds.source_id = ANY ($1::text[]) AND d.enabled`

/**
 * Per message, the destinations its source's gates keep it from ("id=f" / "id=s", comma-separated;
 * '' when none). Read before the statement: a destination changed meanwhile is judged by the settings
 * it had a moment earlier, as if the call had arrived a moment earlier.
 */
async function closedTargets(db: PostgresDatabase, messages: AcceptedMessage[], sourceIds: string[]) {
  const rows = await db.query<RoutingRow & { source_id: string; type: DestinationType }>(GATED_TARGETS_SQL, [
    sourceIds,
  ])
  const bySource = new Map<
    string,
    { id: string; type: DestinationType; gate: ReturnType<typeof gateOfRow> }[]
  >()
  for (const row of rows) {
    const gate = gateOfRow(row)
    if (gate === null) continue
    const list = bySource.get(row.source_id) ?? []
    list.push({ id: row.id, type: row.type, gate })
    bySource.set(row.source_id, list)
  }
  return messages.map((message) => {
    const targets = bySource.get(message.sourceId)
    if (targets === undefined) return ''
    const closed = closedGates(targets, message.routeTo, message.payloadJson)
    if (closed === null) return ''
    return [...closed].map(([id, verdict]) => `${id}=${verdict === 'filtered' ? 'f' : 's'}`).join(',')
  })
}

export function postgresIngest(db: PostgresDatabase): IngestSql {
  return async (messages, plan, now, duplicatesAfter) => {
    const stored: boolean[] = new Array(messages.length).fill(false)
    // Repeats inside the batch are already out of the plan, as they must be: ON CONFLICT DO UPDATE may
    // not touch one row twice in a statement.
    const unique: { index: number; key: string; message: AcceptedMessage; messageId: string }[] = []
    for (const { firsts } of plan) {
      for (const index of firsts) {
        const message = messages[index]!
        const messageId = pgText(message.messageId)
        unique.push({ index, key: `${message.sourceId}\u0000${messageId}`, message, messageId })
      }
    }
    // The same lock order in every transaction: concurrent ingests of overlapping keys wait for each
    // other instead of deadlocking.
    unique.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const sources = plan.toSorted((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0))
    const params = [
      unique.map((u) => u.message.sourceId),
      unique.map((u) => u.messageId),
      unique.map((u) => u.message.receivedAt),
      unique.map((u) => u.message.type),
      packPayloads(unique.map((u) => u.message.payloadJson)),
      unique.map((u) => u.message.routeTo.join(',')),
      duplicatesAfter,
      now,
      sources.map((source) => source.sourceId),
      sources.map((source) => source.total),
      randomInt(COUNTER_SHARDS),
      unique.map((u) => pgText(u.message.userId ?? null)),
      unique.map((u) => pgText(u.message.previousId ?? null)),
      await closedTargets(
        db,
        unique.map((u) => u.message),
        sources.map((source) => source.sourceId),
      ),
      unique.reduce((oldest, u) => Math.min(oldest, u.message.receivedAt), Number.MAX_SAFE_INTEGER),
    ]
    // One statement is one transaction: it commits as a whole or not at all. A rejected promise here —
    // including a connection cut during the commit — makes the Tracking API answer 5xx, never 200.
    const [row] = await db.retrying(() =>
      db.query<{ deliveries: number; accepted: number[] }>(INGEST_SQL, params),
    )
    for (const ord of row?.accepted ?? []) stored[unique[ord - 1]!.index] = true
    return { stored, deliveriesCreated: row?.deliveries ?? 0 }
  }
}
