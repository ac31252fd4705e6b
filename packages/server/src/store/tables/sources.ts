/** The `sources` table (and its counters: `source_counters` on PostgreSQL, columns on SQLite). */
import type { Source, SourceStats } from '../../domain/sources.ts'
import type { Awaitable, Flag } from './sql-types.ts'

export interface SourceRow {
  id: string
  name: string
  /** Sealed with the secret key (lib/secret-box.ts) when the store has one; in clear otherwise. */
  write_key: string
  /** SHA-256 of the write key, hex: what lookups by write key compare. Null until resealed at start. */
  write_key_hash: string | null
  enabled: Flag
  created_at: number
}

/** Fields left null are kept as they are. */
export interface SourceChange {
  name: string | null
  enabled: boolean | null
  /** The new write key as stored, with its hash; null: kept. */
  writeKey: { stored: string; hash: string } | null
}

export interface SourcesSql {
  /** Returns the row as stored. */
  insert(
    source: Omit<SourceRow, 'enabled' | 'write_key_hash'> & { enabled: boolean; write_key_hash: string },
  ): Awaitable<SourceRow>
  list(): Awaitable<SourceRow[]>
  get(id: string): Awaitable<SourceRow | undefined>
  getByWriteKeyHash(writeKeyHash: string): Awaitable<SourceRow | undefined>
  /** Sets the write key as stored, and its hash, if `write_key` still holds `from`; false otherwise. */
  replaceWriteKey(id: string, from: string, to: string, hash: string): Awaitable<boolean>
  /** Returns the row as updated, or undefined when there is no such source. */
  update(id: string, change: SourceChange): Awaitable<SourceRow | undefined>
  /** The source with its connections, messages, deliveries and attempts. */
  delete(id: string): Awaitable<boolean>
  /** Undefined when the source has no counters (yet, or no longer). */
  stats(id: string): Awaitable<SourceStats | undefined>
  countRejected(id: string, count: number): Awaitable<void>
  countSuppressed(id: string, count: number): Awaitable<void>
}

/** `writeKey`: the row's write key, opened. */
export function toSource(row: SourceRow, writeKey: string): Source {
  return {
    id: row.id,
    name: row.name,
    writeKey,
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
  }
}
