/**
 * Ingest on SQLite, the hot write path: dedupe, messages, their deliveries and the source counters of
 * one group commit, in one transaction. This store is the only writer of its file, so dedupe is a
 * lookup among stored messages inside the write transaction: nothing can insert the same id meanwhile.
 */
import type { SQLInputValue } from 'node:sqlite'
import type { DestinationType } from '../../../domain/destinations.ts'
import type { AcceptedMessage } from '../../../domain/message-store.ts'
import { erasedOnArrival } from '../../../domain/privacy-store.ts'
import { type Router, type RoutingRow, routerOf } from '../../../route/gates.ts'
import type { IngestSql, MessageRow } from '../../tables/messages.ts'
import { placeholders, ROWS_PER_STATEMENT, type SqliteDatabase } from '../database.ts'
import { dedupeKey } from '../dedupe-key.ts'
import type { IngestHandoff } from '../ingest-handoff.ts'
import { addGatedCounts } from './destinations.ts'
import { sqliteErasuresSince } from './regulations.ts'
import { addSourceMinutes } from './rollups.ts'

/** `handoff`: told each commit's stored rows, for the profile worker (ingest-handoff.ts). */
export function sqliteIngest(db: SqliteDatabase, handoff: IngestHandoff): IngestSql {
  /**
   * Which of `messageIds` the source sent after `after` (one statement per ROWS_PER_STATEMENT ids). The
   * lookup goes by dedupe key (dedupe-key.ts) and compares the text on a key hit, so a hash collision is
   * never taken for a duplicate; messages stored without a key (Sluice's own, 007_dedupe_key.sql) are
   * looked up by their text.
   */
  const storedMessageIds = (
    sourceId: string,
    messageIds: string[],
    keys: number[],
    after: number,
  ): Set<string> => {
    const found = new Set<string>()
    for (let at = 0; at < keys.length; at += ROWS_PER_STATEMENT) {
      const count = Math.min(ROWS_PER_STATEMENT, keys.length - at)
      const list = placeholders(count, '?')
      const rows = db
        .sql(
          `SELECT message_id FROM messages WHERE dedupe_key IN (${list}) AND source_id = ? AND received_at > ?
           UNION ALL
           SELECT message_id FROM messages WHERE dedupe_key IS NULL AND source_id = ? AND message_id IN (${list}) AND received_at > ?`,
        )
        .all(
          ...keys.slice(at, at + count),
          sourceId,
          after,
          sourceId,
          ...messageIds.slice(at, at + count),
          after,
        ) as { message_id: string }[]
      for (const row of rows) found.add(row.message_id)
    }
    return found
  }

  /**
   * Inserts the messages with one statement; returns the first one's pk. The rows of a multi-row
   * INSERT get consecutive rowids in VALUES order (one writer, AUTOINCREMENT: each is the largest so
   * far plus one), so message k of the chunk has pk first + k.
   */
  const insertMessages = (chunk: AcceptedMessage[], keys: number[]): number => {
    const values: SQLInputValue[] = []
    for (let k = 0; k < chunk.length; k++) {
      const message = chunk[k]!
      values.push(
        message.sourceId,
        message.messageId,
        message.type,
        message.receivedAt,
        message.payloadJson,
        message.userId ?? null,
        message.previousId ?? null,
        keys[k]!,
      )
    }
    const { lastInsertRowid, changes } = db
      .sql(
        `INSERT INTO messages (source_id, message_id, type, received_at, payload, user_id, previous_id, dedupe_key) VALUES ${placeholders(chunk.length, '(?, ?, ?, ?, ?, ?, ?, ?)')}`,
      )
      .run(...values)
    // We MUST know each message's pk to route it; anything but one row per message is a bug.
    if (Number(changes) !== chunk.length) throw new Error('multi-row INSERT inserted an unexpected row count')
    return Number(lastInsertRowid) - chunk.length + 1
  }

  /** `values`: (message_pk, destination_id, next_attempt_at, created_at, updated_at) per delivery. */
  const insertDeliveries = (values: SQLInputValue[]): number => {
    const columns = 5
    for (let at = 0; at < values.length; at += ROWS_PER_STATEMENT * columns) {
      const chunk = values.slice(at, at + ROWS_PER_STATEMENT * columns)
      db.sql(
        `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at) VALUES ${placeholders(chunk.length / columns, "(?, ?, 'pending', ?, ?, ?)")}`,
      ).run(...chunk)
    }
    return values.length / columns
  }

  /**
   * Enabled destinations connected to a source: where its messages may be routed, with their gates
   * (route/gates.ts, kept while their settings do not change).
   */
  const readRoutingTargets = (sourceId: string): Router =>
    routerOf(
      db
        .sql(
          `SELECT d.id, d.type, d.routing, d.updated_at FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
         WHERE ds.source_id = ? AND d.enabled = 1`,
        )
        .all(sourceId) as unknown as (RoutingRow & { type: DestinationType })[],
    )

  /**
   * Each source's router, kept until destinations or their connections change. Re-reading them was
   * a large part of a small commit's cost with many destinations connected. This connection's own
   * writes to those tables (cascades included, and rolled-back ones too) are heard through temporary
   * triggers; another connection's commits through data_version, which then drops every router.
   */
  const routersBySource = new Map<string, Router>()
  let routingChanged = true
  let dataVersion = -1
  let listening = false
  const listenForRoutingChanges = (): void => {
    db.defineFunction('sluice_routing_changed', () => {
      routingChanged = true
      return null
    })
    for (const table of ['destinations', 'destination_sources'])
      for (const change of ['INSERT', 'UPDATE', 'DELETE'])
        db.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS routing_changed_${table}_${change.toLowerCase()} AFTER ${change} ON main.${table} BEGIN SELECT sluice_routing_changed(); END`,
        )
    listening = true
  }
  const routingTargets = (sourceId: string): Router => {
    // Created on first use: the tables exist only once migrations have run.
    if (!listening) listenForRoutingChanges()
    const { data_version } = db.sql('PRAGMA data_version').get() as { data_version: number }
    if (routingChanged || data_version !== dataVersion) {
      routersBySource.clear()
      routingChanged = false
      dataVersion = data_version
    }
    let router = routersBySource.get(sourceId)
    if (router === undefined) {
      router = readRoutingTargets(sourceId)
      routersBySource.set(sourceId, router)
    }
    return router
  }

  /** What the gates kept from each destination in this commit, [filtered, sampledOut]: one statement. */
  const countGated = (counts: Map<string, [number, number]>): void =>
    addGatedCounts(
      db,
      [...counts].map(([destination_id, [filtered, sampled_out]]) => ({
        destination_id,
        filtered,
        sampled_out,
      })),
    )

  const erasuresSince = sqliteErasuresSince(db)

  return (messages, plan, now, duplicatesAfter) => {
    const countAccepted = db.sql(
      'UPDATE sources SET accepted_count = accepted_count + ?, duplicate_count = duplicate_count + ? WHERE id = ?',
    )
    // The rows as the profile worker would read them back, when it reads them (ingest-handoff.ts); not
    // from inside another transaction, which may yet roll back (and its pks be used again).
    const handed: MessageRow[] | null = handoff.wanted && !db.inTransaction ? [] : null
    // Statements cover up to ROWS_PER_STATEMENT rows each: per-statement overhead, not SQLite's B-tree
    // work, was most of the cost of one statement per message.
    const outcome = db.transaction(() => {
      const stored: boolean[] = new Array(messages.length).fill(false)
      let deliveriesCreated = 0
      const gated = new Map<string, [number, number]>()
      let oldest = Number.POSITIVE_INFINITY
      for (const message of messages) if (message.receivedAt < oldest) oldest = message.receivedAt
      // Calls a deletion request committed before this transaction erases: accepted, never stored.
      const erased = erasedOnArrival(erasuresSince(oldest), messages)
      for (const { sourceId, total, firsts } of plan) {
        // Dedupe, inside the write transaction: ids this source stored within the window are dropped.
        const ids = firsts.map((i) => messages[i]!.messageId)
        const keys = ids.map((id) => dedupeKey(sourceId, id))
        const known = storedMessageIds(sourceId, ids, keys, duplicatesAfter)
        let acceptedCount = 0
        const toStore: number[] = []
        const toStoreKeys: number[] = []
        for (let f = 0; f < firsts.length; f++) {
          if (known.has(ids[f]!)) continue
          acceptedCount++
          stored[firsts[f]!] = true
          if (erased?.has(firsts[f]!)) continue
          toStore.push(firsts[f]!)
          toStoreKeys.push(keys[f]!)
        }
        // The routing decision is made here, once, in the same transaction as the message: a crash
        // after commit can never lose a delivery that should exist.
        const router = routingTargets(sourceId)
        router.startCommit()
        const { targets } = router
        for (let at = 0; at < toStore.length; at += ROWS_PER_STATEMENT) {
          const chunk = toStore.slice(at, at + ROWS_PER_STATEMENT)
          const firstPk = insertMessages(
            chunk.map((i) => messages[i]!),
            toStoreKeys.slice(at, at + ROWS_PER_STATEMENT),
          )
          const deliveries: SQLInputValue[] = []
          for (let k = 0; k < chunk.length; k++) {
            const message = messages[chunk[k]!]!
            handed?.push({
              pk: firstPk + k,
              source_id: sourceId,
              message_id: message.messageId,
              type: message.type,
              received_at: message.receivedAt,
              payload: message.payloadJson,
            })
            for (const target of router.route(message.routeTo, message.payloadJson))
              deliveries.push(firstPk + k, targets[target]!.id, now, now, now)
          }
          deliveriesCreated += insertDeliveries(deliveries)
        }
        for (const [id, [filtered, sampledOut]] of router.takeGatedCounts()) {
          const counts = gated.get(id) ?? [0, 0]
          gated.set(id, [counts[0] + filtered, counts[1] + sampledOut])
        }
        countAccepted.run(acceptedCount, total - acceptedCount, sourceId)
      }
      countGated(gated)
      addSourceMinutes(db, messages, stored)
      return { stored, deliveriesCreated }
    })
    if (handed !== null) handoff.committed(handed)
    return outcome
  }
}
