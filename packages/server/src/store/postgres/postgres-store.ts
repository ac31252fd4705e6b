/**
 * The PostgreSQL store: the same contract as the SQLite store, for several Sluice processes (any
 * number of API and worker processes, on any number of machines) sharing one database.
 *
 * What changes with several processes, and how it is handled:
 * - Migrations: run under a PostgreSQL advisory lock, so processes starting together apply each
 *   migration exactly once (see migrate.ts).
 * - Dedupe: a `dedupe_keys` table whose primary key arbitrates between concurrent API processes
 *   (SQLite can rely on being the only writer; PostgreSQL cannot).
 * - Claims: `FOR UPDATE SKIP LOCKED` plus a lease, so two workers never take the same delivery and a
 *   dead worker's deliveries come back when the lease runs out.
 * - Wake-ups: NOTIFY after commits, LISTEN in workers (notifications.ts); polling remains the fallback.
 * - Round trips: ingest and outcome recording are each ONE statement (data-modifying CTEs over
 *   `unnest`ed arrays), so a batch costs one round trip and one commit whatever its size.
 * - Connection loss: the pool drops broken connections and opens new ones; a statement that fails
 *   (including a COMMIT cut off by a restart) rejects its promise, so the Tracking API answers 5xx and
 *   the client retries — never a 200 for an unknown outcome. A retry of a message that did commit is
 *   dropped by the dedupe rule.
 */

import { createHash, randomInt } from 'node:crypto'
import pg, { type Pool, type PoolClient, type QueryResultRow } from 'pg'
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
import {
  clientConfig,
  isRetryable,
  type PostgresStoreOptions,
  pgText,
  poolConfig,
  SILENT_LOGGER,
  type StoreLogger,
} from './connection.ts'
import { migrate } from './migrate.ts'
import { Listener, Notifier, type StoreEvent } from './notifications.ts'

export type { PostgresStoreOptions } from './connection.ts'

/** Rows deleted per statement by `sweep`, so a large clean-up never holds locks for long. */
const SWEEP_CHUNK = 5_000
/** Counter shards per source (see source_counters in 001_init.sql). */
const COUNTER_SHARDS = 16
/**
 * A found source is trusted this long at most: the bound on staleness if change notifications stop
 * arriving without the LISTEN connection noticing (a silently dead network path). Normally a change
 * reaches every process within milliseconds. The SQLite store caches for the same 2 s.
 */
const WRITE_KEY_CACHE_MS = 2_000
const WRITE_KEY_CACHE_SIZE = 10_000
/** Attempts of a statement PostgreSQL rolled back for a deadlock or serialization failure. */
const MAX_TRIES = 3

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
 */
const INGEST_SQL = `
WITH input AS MATERIALIZED (
  SELECT i.*, nextval('messages_pk_seq') AS pk
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], string_to_array($5::text, chr(1)), $6::text[])
    WITH ORDINALITY AS i(source_id, message_id, received_at, type, payload, route_to, ord)
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
  INSERT INTO messages (pk, source_id, message_id, type, received_at, payload)
  SELECT pk, source_id, message_id, type, received_at, payload FROM accepted ORDER BY ord
),
created AS (
  INSERT INTO deliveries (message_pk, destination_id, status, next_attempt_at, created_at, updated_at)
  SELECT a.pk, t.id, 'pending', $8, $8, $8
  FROM accepted a JOIN targets t ON t.source_id = a.source_id
  WHERE t.type = ANY (string_to_array(a.route_to, ','))
  ORDER BY a.pk, t.id
  RETURNING 1
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
)
SELECT (SELECT count(*) FROM created) AS deliveries,
       (SELECT COALESCE(array_agg(ord::int), '{}') FROM accepted) AS accepted`

/**
 * Outcomes in one statement: the deliveries' new states (leases released) and their attempts. A
 * delivery that no longer exists (its destination was deleted meanwhile) gets no attempt rows.
 */
const RECORD_SQL = `
WITH o AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::bigint[], $5::bigint[], $6::text[])
    AS o(id, status, dead_lettered, next_attempt_at, first_attempt_at, closed_urls)
),
updated AS (
  UPDATE deliveries d SET status = o.status, dead_lettered = o.dead_lettered,
    attempt_count = d.attempt_count + 1, next_attempt_at = o.next_attempt_at,
    first_attempt_at = COALESCE(d.first_attempt_at, o.first_attempt_at), closed_urls = o.closed_urls,
    lease_until = NULL, updated_at = $7
  FROM o WHERE d.id = o.id
  RETURNING d.id, d.destination_id
)
INSERT INTO attempts (delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text,
  latency_ms, response_excerpt)
SELECT a.delivery_id, u.destination_id, a.attempted_at, a.url, a.status_code, a.error_kind, a.error_text,
  a.latency_ms, a.response_excerpt
FROM unnest($8::bigint[], $9::bigint[], $10::text[], $11::int[], $12::text[], $13::text[], $14::int[], $15::text[])
  WITH ORDINALITY AS a(delivery_id, attempted_at, url, status_code, error_kind, error_text, latency_ms,
    response_excerpt, ord)
JOIN updated u ON u.id = a.delivery_id
ORDER BY a.ord`

/**
 * Picks and leases in one statement. SKIP LOCKED: rows another worker is claiming right now are
 * passed over instead of waited for; once that worker commits, its rows carry a live lease and no
 * longer match. So two claimers never get the same delivery, and neither blocks the other.
 *
 * The claim commits without waiting for its WAL flush (synchronous_commit off for this transaction
 * only, via set_config(..., true)). Harmless: if PostgreSQL crashes before the flush, the lease is lost
 * and the delivery is claimable again — the same outcome as the worker crashing, which leases already
 * handle. Ingest and outcome commits keep the server's setting (durable).
 */
const CLAIM_SQL = `
WITH due AS (
  SELECT id FROM deliveries
  WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND next_attempt_at <= $2
    AND (lease_until IS NULL OR lease_until <= $2)
  ORDER BY next_attempt_at, id
  LIMIT $3
  FOR UPDATE SKIP LOCKED
)
UPDATE deliveries d SET lease_until = $4, updated_at = $2
FROM due, messages m, (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush_wait
WHERE d.id = due.id AND m.pk = d.message_pk
RETURNING d.id, d.attempt_count, d.first_attempt_at, d.closed_urls, m.payload`

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  private readonly options: PostgresStoreOptions
  private readonly pool: Pool
  private readonly logger: StoreLogger
  private readonly notifier: Notifier
  private readonly listeners = new Set<Listener>()
  private channelName: Promise<string> | undefined
  private closed = false
  private readonly sourcesByKey = new Map<string, { source: Source; until: number }>()
  private sourceListener: Listener | null = null
  private sourceCacheLive = false
  private sourceGeneration = 0

  constructor(options: PostgresStoreOptions) {
    this.options = options
    this.logger = options.logger ?? SILENT_LOGGER
    this.pool = new pg.Pool(poolConfig(options))
    // An idle pooled connection that dies (PostgreSQL restarted, network cut) emits 'error' on the pool;
    // without a listener that would crash the process. The pool has already discarded the connection
    // and opens a new one on demand: nothing else to do.
    this.pool.on('error', (error) => {
      this.logger.warn({ err: error }, 'postgres: an idle connection was lost; it will be replaced')
    })
    this.notifier = new Notifier(this.pool, () => this.channel(), this.logger)
  }

  private async query<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(text, values)).rows
  }

  /** Retries a statement PostgreSQL rolled back as a whole (deadlock, serialization failure). */
  private async retrying<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work()
      } catch (error) {
        if (attempt >= MAX_TRIES || !isRetryable(error)) throw error
      }
    }
  }

  /** Runs `work` in one transaction on one connection; rolls back and rethrows on any error. */
  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    // Between statements a checked-out client has no query to fail, so a dropped connection would
    // surface as an unhandled 'error' event. The failing statement reports it to the caller instead.
    const ignore = () => {}
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      broken = error as Error
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.off('error', ignore)
      // A client whose transaction failed is discarded rather than reused: its state is unknown.
      client.release(broken)
    }
  }

  /** The NOTIFY channel, per schema, so stores in different schemas of one database don't wake each other. */
  private channel(): Promise<string> {
    this.channelName ??= this.query<{ schema: string | null }>('SELECT current_schema() AS schema')
      .then((rows) => {
        const channel = `sluice_${rows[0]?.schema ?? 'public'}`
        // Channel names are identifiers: at most 63 bytes.
        return Buffer.byteLength(channel) <= 63
          ? channel
          : `sluice_${createHash('sha1').update(channel).digest('hex')}`
      })
      .catch((error: unknown) => {
        this.channelName = undefined
        throw error
      })
    return this.channelName
  }

  async migrate(): Promise<void> {
    const client = new pg.Client({ ...clientConfig(this.options), statement_timeout: 0 })
    client.on('error', () => {}) // reported by the failing query
    await client.connect()
    try {
      await migrate(client)
      // "200 means committed to disk" holds only if PostgreSQL waits for its WAL flush at commit.
      const settings = await client.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync')",
      )
      for (const { name, setting } of settings.rows) {
        if (setting === 'off') {
          this.logger.warn(
            { [name]: setting },
            `postgres: ${name} is off, so an acknowledged message can be lost if PostgreSQL crashes; turn it on for Sluice's database or role`,
          )
        }
      }
    } finally {
      await client.end().catch(() => {})
    }
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.query<{ ok: number }>('SELECT 1 AS ok')).length === 1
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await Promise.all([...this.listeners, this.sourceListener].map((listener) => listener?.stop()))
    this.listeners.clear()
    await this.notifier.idle()
    await this.pool.end()
  }

  async watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    const watcher = new Listener({
      config: clientConfig(this.options),
      channel: () => this.channel(),
      onEvent: (event) => {
        if (event !== 'sources') listener(event)
      },
      // On every (re)connection: whatever was announced while disconnected is lost, so look for work
      // and re-read destinations now.
      onState: (connected) => {
        if (!connected) return
        listener('config')
        listener('deliveries')
      },
      logger: this.logger,
    })
    this.listeners.add(watcher)
    await watcher.start()
    return async () => {
      this.listeners.delete(watcher)
      await watcher.stop()
    }
  }

  /** Backend pids of the LISTEN connections (tests cut them to check the reconnect). */
  listenerPids(): number[] {
    return [...this.listeners].map((listener) => listener.backendPid).filter((pid) => pid !== null)
  }

  // --- sources ---

  async createSource(input: NewSource): Promise<Source> {
    const source: Source = {
      id: newId('src'),
      name: pgText(input.name),
      writeKey: newSecretToken(),
      enabled: input.enabled,
      createdAt: Date.now(),
    }
    await this.query(
      'INSERT INTO sources (id, name, write_key, enabled, created_at) VALUES ($1, $2, $3, $4, $5)',
      [source.id, source.name, source.writeKey, source.enabled, source.createdAt],
    )
    return source
  }

  async listSources(): Promise<Source[]> {
    return (await this.query<SourceRow>('SELECT * FROM sources ORDER BY created_at, id')).map(toSource)
  }

  async getSource(id: string): Promise<Source | null> {
    const [row] = await this.query<SourceRow>('SELECT * FROM sources WHERE id = $1', [pgText(id)])
    return row ? toSource(row) : null
  }

  /**
   * Every Tracking API request looks its write key up, so found sources are cached — but only while
   * this process hears the `sources` notifications that every source change sends (see
   * sourceChanged): a key rotated or a source disabled by ANY process drops every process's cache as
   * soon as the notification arrives (milliseconds after the commit). While that LISTEN connection is
   * known to be down, nothing is cached and every lookup asks PostgreSQL.
   */
  async getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    if (writeKey.includes('\u0000')) return null // no write key has one (they are base64url)
    this.startSourceListener()
    const cached = this.sourcesByKey.get(writeKey)
    if (cached && cached.until > Date.now()) return cached.source
    // An invalidation that arrives while this query runs must win over its (possibly stale) answer.
    const generation = this.sourceGeneration
    const [row] = await this.query<SourceRow>('SELECT * FROM sources WHERE write_key = $1', [writeKey])
    const source = row ? toSource(row) : null
    if (source && this.sourceCacheLive && generation === this.sourceGeneration) {
      if (this.sourcesByKey.size >= WRITE_KEY_CACHE_SIZE) this.sourcesByKey.clear()
      this.sourcesByKey.set(writeKey, { source, until: Date.now() + WRITE_KEY_CACHE_MS })
    }
    return source
  }

  private startSourceListener(): void {
    if (this.sourceListener || this.closed) return
    this.sourceListener = new Listener({
      config: clientConfig(this.options),
      channel: () => this.channel(),
      onEvent: (event) => {
        if (event === 'sources') this.dropSourceCache()
      },
      onState: (connected) => {
        this.dropSourceCache()
        this.sourceCacheLive = connected
      },
      logger: this.logger,
    })
    void this.sourceListener.start()
  }

  private dropSourceCache(): void {
    this.sourceGeneration++
    this.sourcesByKey.clear()
  }

  /** After a committed source change: this process's cache at once, the others' by notification. */
  private sourceChanged(): void {
    this.dropSourceCache()
    this.notifier.notify('sources')
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    const [row] = await this.query<SourceRow>(
      `UPDATE sources SET name = COALESCE($2, name), enabled = COALESCE($3, enabled),
         write_key = COALESCE($4, write_key)
       WHERE id = $1 RETURNING *`,
      [
        pgText(id),
        patch.name === undefined ? null : pgText(patch.name),
        patch.enabled ?? null,
        patch.rotateWriteKey ? newSecretToken() : null,
      ],
    )
    if (row) this.sourceChanged()
    return row ? toSource(row) : null
  }

  async deleteSource(id: string): Promise<boolean> {
    // Messages, keys, deliveries and attempts have no FKs (see 001_init.sql): removed here, in order.
    const deleted = await this.transaction(async (client) => {
      // A source's history can be millions of rows: this rare admin operation may outlast the timeout.
      await client.query('SET LOCAL statement_timeout = 0')
      // 1. The source row first: waits for in-flight ingests (they hold it FOR KEY SHARE); ingests
      //    that come later find it gone and store nothing for it.
      const deleted = await client.query('DELETE FROM sources WHERE id = $1', [pgText(id)])
      if ((deleted.rowCount ?? 0) === 0) return false
      // 2. Lock its deliveries: waits for outcomes being recorded right now, so that their attempt rows
      //    are visible to step 3 (a later statement); later outcomes find the rows gone.
      await client.query(
        `WITH locked AS (SELECT d.id FROM deliveries d JOIN messages m ON m.pk = d.message_pk
           WHERE m.source_id = $1 FOR UPDATE OF d) SELECT count(*) FROM locked`,
        [pgText(id)],
      )
      // 3. Messages with their deliveries and attempts; then its dedupe keys. Connections and
      //    counters go by FK cascade.
      await client.query(
        `WITH gone AS (DELETE FROM messages WHERE source_id = $1 RETURNING pk),
           deliveries_gone AS (DELETE FROM deliveries WHERE message_pk IN (SELECT pk FROM gone) RETURNING id)
         DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries_gone)`,
        [pgText(id)],
      )
      await client.query('DELETE FROM dedupe_keys WHERE source_id = $1', [pgText(id)])
      return true
    })
    if (deleted) this.sourceChanged()
    return deleted
  }

  async getSourceStats(id: string): Promise<SourceStats> {
    const [row] = await this.query<{ accepted: number; duplicates: number; rejected: number }>(
      `SELECT COALESCE(sum(accepted), 0)::bigint AS accepted, COALESCE(sum(duplicates), 0)::bigint AS duplicates,
         COALESCE(sum(rejected), 0)::bigint AS rejected
       FROM source_counters WHERE source_id = $1`,
      [pgText(id)],
    )
    return { accepted: row?.accepted ?? 0, duplicates: row?.duplicates ?? 0, rejected: row?.rejected ?? 0 }
  }

  async countRejected(sourceId: string, count: number): Promise<void> {
    // INSERT … SELECT FROM sources: a deleted source is silently skipped, as SQLite's UPDATE does.
    await this.query(
      `INSERT INTO source_counters AS c (source_id, shard, rejected)
       SELECT id, $3, $2 FROM sources WHERE id = $1
       ON CONFLICT (source_id, shard) DO UPDATE SET rejected = c.rejected + EXCLUDED.rejected`,
      [pgText(sourceId), count, randomInt(COUNTER_SHARDS)],
    )
  }

  // --- destinations ---

  private async connectionsOf(destinationIds: string[] | null): Promise<Map<string, string[]>> {
    const rows =
      destinationIds === null
        ? await this.query<{ destination_id: string; source_id: string }>(
            'SELECT destination_id, source_id FROM destination_sources ORDER BY source_id',
          )
        : await this.query<{ destination_id: string; source_id: string }>(
            'SELECT destination_id, source_id FROM destination_sources WHERE destination_id = ANY($1) ORDER BY source_id',
            [destinationIds],
          )
    const byDestination = new Map<string, string[]>()
    for (const row of rows) {
      const list = byDestination.get(row.destination_id) ?? []
      list.push(row.source_id)
      byDestination.set(row.destination_id, list)
    }
    return byDestination
  }

  /** Replaces a destination's connections; unknown source ids are skipped (as SQLite's INSERT OR IGNORE… FK). */
  private async replaceConnections(
    client: PoolClient,
    destinationId: string,
    sourceIds: string[],
  ): Promise<void> {
    await client.query('DELETE FROM destination_sources WHERE destination_id = $1', [destinationId])
    if (sourceIds.length === 0) return
    await client.query(
      `INSERT INTO destination_sources (destination_id, source_id)
       SELECT $1, s.id FROM sources s WHERE s.id = ANY($2)
       ON CONFLICT DO NOTHING`,
      [destinationId, sourceIds.map((id) => pgText(id))],
    )
  }

  async createDestination(input: NewDestination): Promise<Destination> {
    const now = Date.now()
    const id = newId('dst')
    await this.transaction(async (client) => {
      await client.query(
        'INSERT INTO destinations (id, name, type, enabled, settings, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [id, pgText(input.name), input.type, input.enabled, JSON.stringify(input.settings), now, now],
      )
      await this.replaceConnections(client, id, input.sourceIds)
    })
    this.notifier.notify('config')
    return (await this.getDestination(id))!
  }

  async listDestinations(): Promise<Destination[]> {
    const rows = await this.query<DestinationRow>('SELECT * FROM destinations ORDER BY created_at, id')
    const connections = await this.connectionsOf(null)
    return rows.map((row) => toDestination(row, connections.get(row.id) ?? []))
  }

  async getDestination(id: string): Promise<Destination | null> {
    const [row] = await this.query<DestinationRow>('SELECT * FROM destinations WHERE id = $1', [pgText(id)])
    if (!row) return null
    return toDestination(row, (await this.connectionsOf([row.id])).get(row.id) ?? [])
  }

  async updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null> {
    const found = await this.transaction(async (client) => {
      const result = await client.query(
        `UPDATE destinations SET name = COALESCE($2, name), enabled = COALESCE($3, enabled),
           settings = COALESCE($4, settings), updated_at = $5
         WHERE id = $1`,
        [
          pgText(id),
          patch.name === undefined ? null : pgText(patch.name),
          patch.enabled ?? null,
          patch.settings === undefined ? null : JSON.stringify(patch.settings),
          Date.now(),
        ],
      )
      if ((result.rowCount ?? 0) === 0) return false
      if (patch.sourceIds) await this.replaceConnections(client, pgText(id), patch.sourceIds)
      return true
    })
    if (!found) return null
    this.notifier.notify('config')
    return this.getDestination(id)
  }

  async deleteDestination(id: string): Promise<boolean> {
    // Deliveries and attempts have no FKs (see 001_init.sql): removed here, in order (as deleteSource).
    const deleted = await this.transaction(async (client) => {
      await client.query('SET LOCAL statement_timeout = 0') // as deleteSource: may be millions of rows
      const gone = await client.query('DELETE FROM destinations WHERE id = $1', [pgText(id)])
      if ((gone.rowCount ?? 0) === 0) return false
      await client.query(
        'WITH locked AS (SELECT id FROM deliveries WHERE destination_id = $1 FOR UPDATE) SELECT count(*) FROM locked',
        [pgText(id)],
      )
      await client.query('DELETE FROM attempts WHERE destination_id = $1', [pgText(id)])
      await client.query('DELETE FROM deliveries WHERE destination_id = $1', [pgText(id)])
      return true
    })
    if (deleted) this.notifier.notify('config')
    return deleted
  }

  // --- ingest ---

  async ingest(messages: AcceptedMessage[], dedupeWindowMs: number): Promise<IngestOutcome> {
    if (messages.length === 0) return { stored: [], deliveriesCreated: 0 }
    const now = Date.now()
    const stored: boolean[] = new Array(messages.length).fill(false)
    // A repeat inside the batch is a duplicate of its first occurrence (SQLite sees the earlier insert
    // in the same transaction). It must also be taken out here: ON CONFLICT DO UPDATE may not touch
    // one row twice in a statement.
    const firstIndex = new Map<string, number>()
    const totals = new Map<string, number>()
    const unique: { index: number; key: string; message: AcceptedMessage; messageId: string }[] = []
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]!
      totals.set(message.sourceId, (totals.get(message.sourceId) ?? 0) + 1)
      const messageId = pgText(message.messageId)
      const key = `${message.sourceId}\u0000${messageId}`
      if (firstIndex.has(key)) continue
      firstIndex.set(key, index)
      unique.push({ index, key, message, messageId })
    }
    // The same lock order in every transaction: concurrent ingests of overlapping keys wait for each
    // other instead of deadlocking.
    unique.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const sourceIds = [...totals.keys()].sort()
    const params = [
      unique.map((u) => u.message.sourceId),
      unique.map((u) => u.messageId),
      unique.map((u) => u.message.receivedAt),
      unique.map((u) => u.message.type),
      packPayloads(unique.map((u) => u.message.payloadJson)),
      unique.map((u) => u.message.routeTo.join(',')),
      now - dedupeWindowMs,
      now,
      sourceIds,
      sourceIds.map((id) => totals.get(id)!),
      randomInt(COUNTER_SHARDS),
    ]
    // One statement is one transaction: it commits as a whole or not at all. A rejected promise here —
    // including a connection cut during the commit — makes the Tracking API answer 5xx, never 200.
    const [row] = await this.retrying(() =>
      this.query<{ deliveries: number; accepted: number[] }>(INGEST_SQL, params),
    )
    for (const ord of row?.accepted ?? []) stored[unique[ord - 1]!.index] = true
    const deliveriesCreated = row?.deliveries ?? 0
    if (deliveriesCreated > 0) this.notifier.notify('deliveries')
    return { stored, deliveriesCreated }
  }

  async getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null> {
    const [row] = await this.query<{
      pk: number
      source_id: string
      message_id: string
      type: string
      received_at: number
      payload: string
    }>('SELECT * FROM messages WHERE source_id = $1 AND message_id = $2 ORDER BY pk DESC LIMIT 1', [
      pgText(sourceId),
      pgText(messageId),
    ])
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
    const [row] =
      sourceId === undefined
        ? await this.query<{ n: number }>('SELECT count(*) AS n FROM messages')
        : await this.query<{ n: number }>('SELECT count(*) AS n FROM messages WHERE source_id = $1', [
            pgText(sourceId),
          ])
    return row?.n ?? 0
  }

  async countDeliveries(filter: { destinationId?: string; status?: DeliveryStatus } = {}): Promise<number> {
    const [row] = await this.query<{ n: number }>(
      `SELECT count(*) AS n FROM deliveries
       WHERE ($1::text IS NULL OR destination_id = $1) AND ($2::text IS NULL OR status = $2)`,
      [filter.destinationId === undefined ? null : pgText(filter.destinationId), filter.status ?? null],
    )
    return row?.n ?? 0
  }

  // --- deliveries ---

  async claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return []
    const rows = await this.query<{
      id: number
      attempt_count: number
      first_attempt_at: number | null
      closed_urls: string | null
      payload: string
    }>(CLAIM_SQL, [pgText(destinationId), now, limit, now + leaseMs])
    return rows
      .sort((a, b) => a.id - b.id)
      .map((row) => ({
        id: row.id,
        destinationId,
        attemptCount: row.attempt_count,
        firstAttemptAt: row.first_attempt_at,
        closedUrls: parseUrls(row.closed_urls),
        payload: JSON.parse(row.payload) as Record<string, unknown>,
      }))
  }

  async recordOutcomes(outcomes: DeliveryOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    const now = Date.now()
    const attempts = outcomes.flatMap((outcome) =>
      outcome.attempts.map((attempt) => ({ deliveryId: outcome.deliveryId, attempt })),
    )
    const params = [
      outcomes.map((o) => o.deliveryId),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.deadLettered),
      // A final delivery keeps a due time (never claimed again: only pending/retrying rows are).
      outcomes.map((o) => o.nextAttemptAt ?? now),
      outcomes.map((o) => o.firstAttemptAt),
      outcomes.map((o) => (o.closedUrls.length > 0 ? pgText(JSON.stringify(o.closedUrls)) : null)),
      now,
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.attempt.attemptedAt),
      attempts.map((a) => pgText(a.attempt.url)),
      attempts.map((a) => a.attempt.statusCode),
      attempts.map((a) => pgText(a.attempt.errorKind)),
      // Receivers' answers are arbitrary bytes: a U+0000 in one must not fail the whole group.
      attempts.map((a) => pgText(a.attempt.errorText)),
      attempts.map((a) => Math.round(a.attempt.latencyMs)),
      attempts.map((a) => pgText(a.attempt.responseExcerpt)),
    ]
    await this.retrying(() => this.query(RECORD_SQL, params))
  }

  async releaseClaims(deliveryIds: number[]): Promise<void> {
    if (deliveryIds.length === 0) return
    await this.query('UPDATE deliveries SET lease_until = NULL WHERE id = ANY($1::bigint[])', [deliveryIds])
  }

  async nextDueAt(destinationId: string, now: number): Promise<number | null> {
    const [row] = await this.query<{ at: number }>(
      `SELECT next_attempt_at AS at FROM deliveries
       WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND (lease_until IS NULL OR lease_until <= $2)
       ORDER BY next_attempt_at LIMIT 1`,
      [pgText(destinationId), now],
    )
    return row?.at ?? null
  }

  async listDeliveries(
    destinationId: string,
    filter: { status?: DeliveryStatus; limit: number; before?: number },
  ): Promise<Delivery[]> {
    const rows = await this.query<DeliveryRow>(
      `SELECT d.*, m.source_id, m.message_id, m.type FROM deliveries d JOIN messages m ON m.pk = d.message_pk
       WHERE d.destination_id = $1 AND ($2::text IS NULL OR d.status = $2) AND ($3::bigint IS NULL OR d.id < $3)
       ORDER BY d.id DESC LIMIT $4`,
      [pgText(destinationId), filter.status ?? null, filter.before ?? null, filter.limit],
    )
    return this.withAttempts(rows)
  }

  async getDelivery(id: number): Promise<Delivery | null> {
    const rows = await this.query<DeliveryRow>(
      `SELECT d.*, m.source_id, m.message_id, m.type FROM deliveries d JOIN messages m ON m.pk = d.message_pk
       WHERE d.id = $1`,
      [id],
    )
    return (await this.withAttempts(rows))[0] ?? null
  }

  private async withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    if (rows.length === 0) return []
    const attempts = await this.query<AttemptRow>(
      'SELECT * FROM attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY id',
      [rows.map((row) => row.id)],
    )
    return toDeliveries(rows, attempts)
  }

  async replayDeliveries(
    filter: { ids: number[] } | { destinationId: string; status: 'failed' | 'delivered'; since?: number },
    now: number,
  ): Promise<number> {
    // A fresh start: a new retry window, every URL open again. attempt_count and the attempts stay as
    // history. Only final deliveries are touched: a pending or retrying one is already scheduled (and
    // may be leased by a worker right now).
    const reset = `UPDATE deliveries SET status = 'pending', dead_lettered = false, next_attempt_at = $1,
      first_attempt_at = NULL, closed_urls = NULL, lease_until = NULL, updated_at = $1`
    const result =
      'ids' in filter
        ? await this.pool.query(
            `${reset} WHERE id = ANY($2::bigint[]) AND status IN ('failed', 'delivered')`,
            [now, filter.ids],
          )
        : await this.pool.query(`${reset} WHERE destination_id = $2 AND status = $3 AND created_at >= $4`, [
            now,
            pgText(filter.destinationId),
            filter.status,
            filter.since ?? 0,
          ])
    const count = result.rowCount ?? 0
    if (count > 0) this.notifier.notify('deliveries')
    return count
  }

  async deliveryStats(destinationId: string): Promise<DeliveryStats> {
    const counts = await this.query<{ status: DeliveryStatus; dead_lettered: boolean; n: number }>(
      'SELECT status, dead_lettered, count(*) AS n FROM deliveries WHERE destination_id = $1 GROUP BY status, dead_lettered',
      [pgText(destinationId)],
    )
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
      if (row.dead_lettered) stats.deadLettered += row.n
    }
    const latencies = (
      await this.query<{ latency_ms: number }>(
        'SELECT latency_ms FROM attempts WHERE destination_id = $1 ORDER BY id DESC LIMIT 1000',
        [pgText(destinationId)],
      )
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

  /**
   * Retention and dedupe-key expiry. Every API process runs it; a session advisory lock lets one at a
   * time do the work (the others return 0 at once) so they never fight over the same rows.
   */
  async sweep(olderThan: number): Promise<{ messages: number }> {
    const client = await this.pool.connect()
    const ignore = () => {}
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      const [lock] = (
        await client.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock(hashtext('sluice.sweep'), hashtext(COALESCE(current_schema(), ''))) AS locked",
        )
      ).rows
      if (!lock?.locked) return { messages: 0 }
      try {
        return await this.sweepLocked(client, olderThan)
      } finally {
        await client.query(
          "SELECT pg_advisory_unlock(hashtext('sluice.sweep'), hashtext(COALESCE(current_schema(), '')))",
        )
      }
    } catch (error) {
      broken = error as Error
      throw error
    } finally {
      client.off('error', ignore)
      client.release(broken)
    }
  }

  private async sweepLocked(client: PoolClient, olderThan: number): Promise<{ messages: number }> {
    // Messages: walk pk order from the oldest and stop at the first young one. With several API
    // processes pk order is only roughly received_at order; a straggler is simply taken next time.
    let messages = 0
    let cursor = 0
    for (;;) {
      const rows = (
        await client.query<{ pk: number; received_at: number }>(
          'SELECT pk, received_at FROM messages WHERE pk > $1 ORDER BY pk LIMIT $2',
          [cursor, SWEEP_CHUNK],
        )
      ).rows
      const expired = rows.filter((row) => row.received_at < olderThan).map((row) => row.pk)
      if (expired.length > 0) {
        // With their deliveries and attempts (no FKs, see 001_init.sql). A message with a pending or
        // retrying delivery stays.
        const [deleted] = (
          await client.query<{ n: number }>(
            `WITH gone AS (
               DELETE FROM messages m WHERE m.pk = ANY($1::bigint[])
               AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = m.pk AND d.status IN ('pending', 'retrying'))
               RETURNING pk),
             deliveries_gone AS (DELETE FROM deliveries WHERE message_pk IN (SELECT pk FROM gone) RETURNING id),
             attempts_gone AS (DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries_gone))
             SELECT count(*) AS n FROM gone`,
            [expired],
          )
        ).rows
        messages += deleted?.n ?? 0
      }
      if (rows.length < SWEEP_CHUNK || expired.length < rows.length) break
      cursor = rows.at(-1)!.pk
    }
    // Dedupe keys: gone once older than the window (they only matter inside it), and in any case once
    // older than retention (the caller's contract: retention covers every window it uses).
    const keyCutoff = Math.max(olderThan, Date.now() - (this.options.dedupeWindowMs ?? 86_400_000))
    for (;;) {
      const deleted = await client.query(
        `DELETE FROM dedupe_keys WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM dedupe_keys WHERE received_at <= $1 LIMIT $2))`,
        [keyCutoff - 1, SWEEP_CHUNK],
      )
      if ((deleted.rowCount ?? 0) < SWEEP_CHUNK) break
    }
    return { messages }
  }
}

export type { StoreEvent }
