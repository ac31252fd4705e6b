import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite'
import { newId, newSecretToken } from '../../lib/ids.ts'
import {
  type AttemptRow,
  type DeliveryRow,
  type DestinationRow,
  parseUrls,
  type SourceRow,
  toDeliveries,
  toDestination,
  toSource,
} from '../rows.ts'
import type {
  AcceptedMessage,
  ClaimedDelivery,
  Delivery,
  DeliveryOutcome,
  DeliveryStats,
  DeliveryStatus,
  Destination,
  DestinationPatch,
  DestinationType,
  IngestOutcome,
  MessageType,
  NewDestination,
  NewSource,
  Source,
  SourcePatch,
  SourceStats,
  Store,
  StoredMessage,
} from '../store.ts'

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations')

/** Rows per multi-row statement at ingest: 5 parameters a row stays far below SQLite's 32,766. */
const ROWS_PER_STATEMENT = 100

/** `count` copies of `one`, comma-separated: a multi-row VALUES list or an IN list. */
function placeholders(count: number, one: string): string {
  return new Array(count).fill(one).join(', ')
}
/**
 * WAL pages after which a commit also folds the WAL into the database file (SQLite's default). The
 * server runs this store on its own thread (threaded-store.ts), so that checkpoint stalls only the
 * store thread for a few milliseconds, never HTTP handling or deliveries, and the WAL stays ~4 MB.
 */
const AUTOCHECKPOINT_PAGES = 1_000
/** Rows deleted per statement by `sweep`, so a large clean-up never holds the write lock for long. */
const SWEEP_CHUNK = 5_000

export interface SqliteStoreOptions {
  /** Folder holding `sluice.db` (created if missing). */
  dataDir: string
  /** `FULL` fsyncs the WAL on every commit (power-loss safe); `NORMAL` only survives process crashes. */
  synchronous: 'FULL' | 'NORMAL'
}

interface ClaimRow {
  id: number
  message_pk: number
  attempt_count: number
  first_attempt_at: number | null
  closed_urls: string | null
}

interface RoutingTarget {
  id: string
  type: DestinationType
}

interface MessageRow {
  pk: number
  source_id: string
  message_id: string
  type: string
  received_at: number
  payload: string
}

/**
 * The embedded store: one SQLite file in WAL mode. node:sqlite is synchronous; calls are short and
 * ingest commits are grouped by the caller, so the event loop is blocked only briefly.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly path: string
  private readonly db: DatabaseSync
  private readonly statements = new Map<string, StatementSync>()
  private readonly synchronous: 'FULL' | 'NORMAL'

  constructor(options: SqliteStoreOptions) {
    mkdirSync(options.dataDir, { recursive: true })
    this.path = join(options.dataDir, 'sluice.db')
    this.db = new DatabaseSync(this.path)
    this.db.exec('PRAGMA journal_mode = WAL')
    this.synchronous = options.synchronous
    this.db.exec(`PRAGMA synchronous = ${options.synchronous}`)
    this.db.exec('PRAGMA foreign_keys = ON')
    this.db.exec('PRAGMA busy_timeout = 5000')
    this.db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
  }

  /** Prepared statements are cached by their SQL text. */
  private sql(text: string): StatementSync {
    let statement = this.statements.get(text)
    if (!statement) {
      statement = this.db.prepare(text)
      this.statements.set(text, statement)
    }
    return statement
  }

  /** Runs `work` in one write transaction; rolls back and rethrows on any error. */
  private transaction<T>(work: () => T): T {
    this.db.exec('BEGIN IMMEDIATE')
    try {
      const result = work()
      this.db.exec('COMMIT')
      return result
    } catch (error) {
      this.db.exec('ROLLBACK')
      throw error
    }
  }

  /**
   * Runs `work` with commits that are not fsynced. Only for writes whose loss on power failure is
   * harmless: a lost lease just means the delivery is attempted again sooner. (Visibility to other
   * connections is the same either way; a later fsynced commit also persists these.)
   */
  private withoutFsync<T>(work: () => T): T {
    if (this.synchronous === 'NORMAL') return work()
    this.db.exec('PRAGMA synchronous = NORMAL')
    try {
      return work()
    } finally {
      this.db.exec('PRAGMA synchronous = FULL')
    }
  }

  async migrate(): Promise<void> {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    )
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
        (r) => r.version,
      ),
    )
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d{3}_.+\.sql$/.test(f))
      .sort()
    for (const file of files) {
      const version = Number(file.slice(0, 3))
      if (applied.has(version)) continue
      const script = readFileSync(join(MIGRATIONS_DIR, file), 'utf8')
      this.transaction(() => {
        this.db.exec(script)
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(version, file, Date.now())
      })
    }
  }

  async ping(): Promise<boolean> {
    return this.sql('SELECT 1 AS ok').get() !== undefined
  }

  async close(): Promise<void> {
    if (!this.db.isOpen) return
    // Fold the WAL into the database file so a closed store is one self-contained file.
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    this.db.close()
  }

  // --- sources ---

  async createSource(input: NewSource): Promise<Source> {
    const source: Source = {
      id: newId('src'),
      name: input.name,
      writeKey: newSecretToken(),
      enabled: input.enabled,
      createdAt: Date.now(),
    }
    this.sql('INSERT INTO sources (id, name, write_key, enabled, created_at) VALUES (?, ?, ?, ?, ?)').run(
      source.id,
      source.name,
      source.writeKey,
      source.enabled ? 1 : 0,
      source.createdAt,
    )
    return source
  }

  async listSources(): Promise<Source[]> {
    const rows = this.sql('SELECT * FROM sources ORDER BY created_at, id').all() as unknown as SourceRow[]
    return rows.map(toSource)
  }

  async getSource(id: string): Promise<Source | null> {
    const row = this.sql('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined
    return row ? toSource(row) : null
  }

  async getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    const row = this.sql('SELECT * FROM sources WHERE write_key = ?').get(writeKey) as SourceRow | undefined
    return row ? toSource(row) : null
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    const current = await this.getSource(id)
    if (!current) return null
    const next: Source = {
      ...current,
      name: patch.name ?? current.name,
      enabled: patch.enabled ?? current.enabled,
      writeKey: patch.rotateWriteKey ? newSecretToken() : current.writeKey,
    }
    this.sql('UPDATE sources SET name = ?, enabled = ?, write_key = ? WHERE id = ?').run(
      next.name,
      next.enabled ? 1 : 0,
      next.writeKey,
      id,
    )
    return next
  }

  async deleteSource(id: string): Promise<boolean> {
    // messages cascade to deliveries and attempts; connections cascade from sources
    return this.sql('DELETE FROM sources WHERE id = ?').run(id).changes > 0
  }

  async getSourceStats(id: string): Promise<SourceStats> {
    const row = this.sql(
      'SELECT accepted_count, duplicate_count, rejected_count FROM sources WHERE id = ?',
    ).get(id) as { accepted_count: number; duplicate_count: number; rejected_count: number } | undefined
    return {
      accepted: row?.accepted_count ?? 0,
      duplicates: row?.duplicate_count ?? 0,
      rejected: row?.rejected_count ?? 0,
    }
  }

  async countRejected(sourceId: string, count: number): Promise<void> {
    this.sql('UPDATE sources SET rejected_count = rejected_count + ? WHERE id = ?').run(count, sourceId)
  }

  // --- destinations ---

  private connections(destinationId?: string): Map<string, string[]> {
    const rows = (
      destinationId === undefined
        ? this.sql('SELECT destination_id, source_id FROM destination_sources ORDER BY source_id').all()
        : this.sql(
            'SELECT destination_id, source_id FROM destination_sources WHERE destination_id = ? ORDER BY source_id',
          ).all(destinationId)
    ) as { destination_id: string; source_id: string }[]
    const bySource = new Map<string, string[]>()
    for (const row of rows) {
      const list = bySource.get(row.destination_id) ?? []
      list.push(row.source_id)
      bySource.set(row.destination_id, list)
    }
    return bySource
  }

  private toDestination(row: DestinationRow, connections: Map<string, string[]>): Destination {
    return toDestination(row, connections.get(row.id) ?? [])
  }

  private replaceConnections(destinationId: string, sourceIds: string[]): void {
    this.sql('DELETE FROM destination_sources WHERE destination_id = ?').run(destinationId)
    const insert = this.sql(
      'INSERT OR IGNORE INTO destination_sources (destination_id, source_id) VALUES (?, ?)',
    )
    for (const sourceId of sourceIds) insert.run(destinationId, sourceId)
  }

  async createDestination(input: NewDestination): Promise<Destination> {
    const now = Date.now()
    const id = newId('dst')
    this.transaction(() => {
      this.sql(
        'INSERT INTO destinations (id, name, type, enabled, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(id, input.name, input.type, input.enabled ? 1 : 0, JSON.stringify(input.settings), now, now)
      this.replaceConnections(id, input.sourceIds)
    })
    return (await this.getDestination(id))!
  }

  async listDestinations(): Promise<Destination[]> {
    const rows = this.sql(
      'SELECT * FROM destinations ORDER BY created_at, id',
    ).all() as unknown as DestinationRow[]
    const connections = this.connections()
    return rows.map((row) => this.toDestination(row, connections))
  }

  async getDestination(id: string): Promise<Destination | null> {
    const row = this.sql('SELECT * FROM destinations WHERE id = ?').get(id) as DestinationRow | undefined
    return row ? this.toDestination(row, this.connections(id)) : null
  }

  async updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null> {
    const current = await this.getDestination(id)
    if (!current) return null
    this.transaction(() => {
      this.sql(
        'UPDATE destinations SET name = ?, enabled = ?, settings = ?, updated_at = ? WHERE id = ?',
      ).run(
        patch.name ?? current.name,
        (patch.enabled ?? current.enabled) ? 1 : 0,
        JSON.stringify(patch.settings ?? current.settings),
        Date.now(),
        id,
      )
      if (patch.sourceIds) this.replaceConnections(id, patch.sourceIds)
    })
    return this.getDestination(id)
  }

  async deleteDestination(id: string): Promise<boolean> {
    return this.sql('DELETE FROM destinations WHERE id = ?').run(id).changes > 0
  }

  // --- ingest ---

  async ingest(messages: AcceptedMessage[], dedupeWindowMs: number): Promise<IngestOutcome> {
    if (messages.length === 0) return { stored: [], deliveriesCreated: 0 }
    const now = Date.now()
    const countAccepted = this.sql(
      'UPDATE sources SET accepted_count = accepted_count + ?, duplicate_count = duplicate_count + ? WHERE id = ?',
    )
    // Statements cover up to ROWS_PER_STATEMENT rows each: per-statement overhead, not SQLite's B-tree
    // work, was most of the cost of one statement per message.
    return this.transaction(() => {
      const stored: boolean[] = new Array(messages.length).fill(false)
      const bySource = new Map<string, number[]>()
      for (let i = 0; i < messages.length; i++) {
        const indexes = bySource.get(messages[i]!.sourceId)
        if (indexes) indexes.push(i)
        else bySource.set(messages[i]!.sourceId, [i])
      }
      let deliveriesCreated = 0
      for (const [sourceId, indexes] of bySource) {
        // Dedupe, inside the write transaction: ids stored within the window, and repeats earlier in
        // this same group, are dropped.
        const known = this.storedMessageIds(
          sourceId,
          indexes.map((i) => messages[i]!.messageId),
          now - dedupeWindowMs,
        )
        const accepted: number[] = []
        for (const i of indexes) {
          const messageId = messages[i]!.messageId
          if (known.has(messageId)) continue
          known.add(messageId)
          stored[i] = true
          accepted.push(i)
        }
        // The routing decision is made here, once, in the same transaction as the message: a crash
        // after commit can never lose a delivery that should exist.
        const targets = this.routingTargets(sourceId)
        for (let at = 0; at < accepted.length; at += ROWS_PER_STATEMENT) {
          const chunk = accepted.slice(at, at + ROWS_PER_STATEMENT)
          const firstPk = this.insertMessages(chunk.map((i) => messages[i]!))
          const deliveries: SQLInputValue[] = []
          for (let k = 0; k < chunk.length; k++) {
            const message = messages[chunk[k]!]!
            for (const target of targets) {
              if (message.routeTo.includes(target.type))
                deliveries.push(firstPk + k, target.id, now, now, now)
            }
          }
          deliveriesCreated += this.insertDeliveries(deliveries)
        }
        countAccepted.run(accepted.length, indexes.length - accepted.length, sourceId)
      }
      return { stored, deliveriesCreated }
    })
  }

  /** Which of `messageIds` the source sent since `since` (one statement per ROWS_PER_STATEMENT ids). */
  private storedMessageIds(sourceId: string, messageIds: string[], since: number): Set<string> {
    const found = new Set<string>()
    for (let at = 0; at < messageIds.length; at += ROWS_PER_STATEMENT) {
      const chunk = messageIds.slice(at, at + ROWS_PER_STATEMENT)
      const rows = this.sql(
        `SELECT message_id FROM messages WHERE source_id = ? AND message_id IN (${placeholders(chunk.length, '?')}) AND received_at > ?`,
      ).all(sourceId, ...chunk, since) as { message_id: string }[]
      for (const row of rows) found.add(row.message_id)
    }
    return found
  }

  /**
   * Inserts the messages with one statement; returns the first one's pk. The rows of a multi-row
   * INSERT get consecutive rowids in VALUES order (one writer, AUTOINCREMENT: each is the largest so
   * far plus one), so message k of the chunk has pk first + k.
   */
  private insertMessages(chunk: AcceptedMessage[]): number {
    const values: SQLInputValue[] = []
    for (const message of chunk) {
      values.push(message.sourceId, message.messageId, message.type, message.receivedAt, message.payloadJson)
    }
    const { lastInsertRowid, changes } = this.sql(
      `INSERT INTO messages (source_id, message_id, type, received_at, payload) VALUES ${placeholders(chunk.length, '(?, ?, ?, ?, ?)')}`,
    ).run(...values)
    // We MUST know each message's pk to route it; anything but one row per message is a bug.
    if (Number(changes) !== chunk.length) throw new Error('multi-row INSERT inserted an unexpected row count')
    return Number(lastInsertRowid) - chunk.length + 1
  }

  /** `values`: (message_pk, destination_id, next_attempt_at, created_at, updated_at) per delivery. */
  private insertDeliveries(values: SQLInputValue[]): number {
    const columns = 5
    for (let at = 0; at < values.length; at += ROWS_PER_STATEMENT * columns) {
      const chunk = values.slice(at, at + ROWS_PER_STATEMENT * columns)
      this.sql(
        `INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at) VALUES ${placeholders(chunk.length / columns, "(?, ?, 'pending', ?, ?, ?)")}`,
      ).run(...chunk)
    }
    return values.length / columns
  }

  /** Enabled destinations connected to a source: where its messages may be routed. */
  private routingTargets(sourceId: string): RoutingTarget[] {
    return this.sql(
      `SELECT d.id, d.type FROM destination_sources ds JOIN destinations d ON d.id = ds.destination_id
       WHERE ds.source_id = ? AND d.enabled = 1`,
    ).all(sourceId) as unknown as RoutingTarget[]
  }

  async getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null> {
    const row = this.sql(
      'SELECT * FROM messages WHERE source_id = ? AND message_id = ? ORDER BY pk DESC LIMIT 1',
    ).get(sourceId, messageId) as MessageRow | undefined
    if (!row) return null
    return {
      pk: row.pk,
      sourceId: row.source_id,
      messageId: row.message_id,
      type: row.type as MessageType,
      receivedAt: row.received_at,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
    }
  }

  async countMessages(sourceId?: string): Promise<number> {
    const params: SQLInputValue[] = sourceId === undefined ? [] : [sourceId]
    const row = this.sql(
      sourceId === undefined
        ? 'SELECT COUNT(*) AS n FROM messages'
        : 'SELECT COUNT(*) AS n FROM messages WHERE source_id = ?',
    ).get(...params) as { n: number }
    return row.n
  }

  async countDeliveries(filter: { destinationId?: string; status?: DeliveryStatus } = {}): Promise<number> {
    const where: string[] = []
    const params: SQLInputValue[] = []
    if (filter.destinationId !== undefined) {
      where.push('destination_id = ?')
      params.push(filter.destinationId)
    }
    if (filter.status !== undefined) {
      where.push('status = ?')
      params.push(filter.status)
    }
    const clause = where.length ? ` WHERE ${where.join(' AND ')}` : ''
    return (this.sql(`SELECT COUNT(*) AS n FROM deliveries${clause}`).get(...params) as { n: number }).n
  }

  // --- deliveries ---

  async claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return []
    // One statement picks and leases, so two claimers can never take the same delivery.
    const claim = this.sql(
      `UPDATE deliveries SET lease_until = ?, updated_at = ?
       WHERE id IN (
         SELECT id FROM deliveries
         WHERE destination_id = ? AND status IN ('pending', 'retrying') AND next_attempt_at <= ?
           AND (lease_until IS NULL OR lease_until <= ?)
         ORDER BY next_attempt_at LIMIT ?)
       RETURNING id, message_pk, attempt_count, first_attempt_at, closed_urls`,
    )
    const claimed = this.withoutFsync(
      () => claim.all(now + leaseMs, now, destinationId, now, now, limit) as unknown as ClaimRow[],
    )
    if (claimed.length === 0) return []
    const payloads = new Map(
      (
        this.sql('SELECT pk, payload FROM messages WHERE pk IN (SELECT value FROM json_each(?))').all(
          JSON.stringify(claimed.map((row) => row.message_pk)),
        ) as { pk: number; payload: string }[]
      ).map((row) => [row.pk, row.payload]),
    )
    return claimed
      .sort((a, b) => a.id - b.id)
      .map((row) => ({
        id: row.id,
        destinationId,
        attemptCount: row.attempt_count,
        firstAttemptAt: row.first_attempt_at,
        closedUrls: parseUrls(row.closed_urls),
        payload: JSON.parse(payloads.get(row.message_pk) ?? '{}') as Record<string, unknown>,
      }))
  }

  async recordOutcomes(outcomes: DeliveryOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    const now = Date.now()
    const insertAttempt = this.sql(
      `INSERT INTO attempts (delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text, latency_ms, response_excerpt)
       SELECT id, destination_id, ?, ?, ?, ?, ?, ?, ? FROM deliveries WHERE id = ?`,
    )
    const update = this.sql(
      `UPDATE deliveries SET status = ?, dead_lettered = ?, attempt_count = attempt_count + 1,
         next_attempt_at = ?, first_attempt_at = COALESCE(first_attempt_at, ?), closed_urls = ?,
         lease_until = NULL, updated_at = ?
       WHERE id = ?`,
    )
    this.transaction(() => {
      for (const outcome of outcomes) {
        for (const attempt of outcome.attempts) {
          insertAttempt.run(
            attempt.attemptedAt,
            attempt.url,
            attempt.statusCode,
            attempt.errorKind,
            attempt.errorText,
            attempt.latencyMs,
            attempt.responseExcerpt,
            outcome.deliveryId,
          )
        }
        update.run(
          outcome.status,
          outcome.deadLettered ? 1 : 0,
          // A final delivery keeps its last due time; only pending/retrying rows are ever claimed.
          outcome.nextAttemptAt ?? now,
          outcome.firstAttemptAt,
          outcome.closedUrls.length > 0 ? JSON.stringify(outcome.closedUrls) : null,
          now,
          outcome.deliveryId,
        )
      }
    })
  }

  async releaseClaims(deliveryIds: number[]): Promise<void> {
    if (deliveryIds.length === 0) return
    this.sql('UPDATE deliveries SET lease_until = NULL WHERE id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(deliveryIds),
    )
  }

  async nextDueAt(destinationId: string, now: number): Promise<number | null> {
    const row = this.sql(
      `SELECT next_attempt_at AS at FROM deliveries
       WHERE destination_id = ? AND status IN ('pending', 'retrying') AND (lease_until IS NULL OR lease_until <= ?)
       ORDER BY next_attempt_at LIMIT 1`,
    ).get(destinationId, now) as { at: number } | undefined
    return row?.at ?? null
  }

  async listDeliveries(
    destinationId: string,
    filter: { status?: DeliveryStatus; limit: number; before?: number },
  ): Promise<Delivery[]> {
    const where = ['d.destination_id = ?']
    const params: SQLInputValue[] = [destinationId]
    if (filter.status !== undefined) {
      where.push('d.status = ?')
      params.push(filter.status)
    }
    if (filter.before !== undefined) {
      where.push('d.id < ?')
      params.push(filter.before)
    }
    params.push(filter.limit)
    const rows = this.sql(
      `SELECT d.*, m.source_id, m.message_id, m.type FROM deliveries d JOIN messages m ON m.pk = d.message_pk
       WHERE ${where.join(' AND ')} ORDER BY d.id DESC LIMIT ?`,
    ).all(...params) as unknown as DeliveryRow[]
    return this.withAttempts(rows)
  }

  async getDelivery(id: number): Promise<Delivery | null> {
    const row = this.sql(
      `SELECT d.*, m.source_id, m.message_id, m.type FROM deliveries d JOIN messages m ON m.pk = d.message_pk
       WHERE d.id = ?`,
    ).get(id) as DeliveryRow | undefined
    return row ? (this.withAttempts([row])[0] ?? null) : null
  }

  private withAttempts(rows: DeliveryRow[]): Delivery[] {
    if (rows.length === 0) return []
    const attempts = this.sql(
      'SELECT * FROM attempts WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY id',
    ).all(JSON.stringify(rows.map((row) => row.id))) as unknown as AttemptRow[]
    return toDeliveries(rows, attempts)
  }

  async replayDeliveries(
    filter: { ids: number[] } | { destinationId: string; status: 'failed' | 'delivered'; since?: number },
    now: number,
  ): Promise<number> {
    // A fresh start: a new retry window, every URL open again. attempt_count and the attempts stay
    // as history.
    const reset = `UPDATE deliveries SET status = 'pending', dead_lettered = 0, next_attempt_at = ?,
      first_attempt_at = NULL, closed_urls = NULL, lease_until = NULL, updated_at = ?`
    if ('ids' in filter) {
      return Number(
        this.sql(
          `${reset} WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('failed', 'delivered')`,
        ).run(now, now, JSON.stringify(filter.ids)).changes,
      )
    }
    return Number(
      this.sql(`${reset} WHERE destination_id = ? AND status = ? AND created_at >= ?`).run(
        now,
        now,
        filter.destinationId,
        filter.status,
        filter.since ?? 0,
      ).changes,
    )
  }

  async deliveryStats(destinationId: string): Promise<DeliveryStats> {
    const counts = this.sql(
      `SELECT status, dead_lettered, COUNT(*) AS n FROM deliveries WHERE destination_id = ? GROUP BY status, dead_lettered`,
    ).all(destinationId) as { status: DeliveryStatus; dead_lettered: number; n: number }[]
    const stats: DeliveryStats = {
      pending: 0,
      retrying: 0,
      delivered: 0,
      failed: 0,
      deadLettered: 0,
      latencyP50Ms: null,
      latencyP95Ms: null,
    }
    for (const row of counts) {
      stats[row.status] += row.n
      if (row.dead_lettered === 1) stats.deadLettered += row.n
    }
    const latencies = (
      this.sql('SELECT latency_ms FROM attempts WHERE destination_id = ? ORDER BY id DESC LIMIT 1000').all(
        destinationId,
      ) as { latency_ms: number }[]
    )
      .map((row) => row.latency_ms)
      .sort((a, b) => a - b)
    if (latencies.length > 0) {
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
      stats.latencyP50Ms = at(0.5)
      stats.latencyP95Ms = at(0.95)
    }
    return stats
  }

  // --- housekeeping ---

  async sweep(olderThan: number): Promise<{ messages: number }> {
    // pk grows with received_at, so walk pk order from the oldest and stop at the first young message.
    const oldest = this.sql('SELECT pk, received_at FROM messages WHERE pk > ? ORDER BY pk LIMIT ?')
    const deleteIfFinal = this.sql(
      `DELETE FROM messages WHERE pk IN (SELECT value FROM json_each(?))
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = messages.pk AND d.status IN ('pending', 'retrying'))`,
    )
    let messages = 0
    let cursor = 0
    for (;;) {
      const rows = oldest.all(cursor, SWEEP_CHUNK) as { pk: number; received_at: number }[]
      const expired = rows.filter((row) => row.received_at < olderThan).map((row) => row.pk)
      if (expired.length > 0) messages += Number(deleteIfFinal.run(JSON.stringify(expired)).changes)
      if (rows.length < SWEEP_CHUNK || expired.length < rows.length) break
      cursor = rows.at(-1)!.pk
    }
    return { messages }
  }
}
