/** The `sources` table (and its counters: `source_counters` on PostgreSQL, columns on SQLite). */
import type { Source, SourceStats } from '../../domain/sources.ts'
import type { Awaitable, Flag } from './sql-types.ts'

export interface SourceRow {
  id: string
  name: string
  write_key: string
  enabled: Flag
  created_at: number
}

/** Fields left null are kept as they are. */
export interface SourceChange {
  name: string | null
  enabled: boolean | null
  writeKey: string | null
}

export interface SourcesSql {
  /** Returns the row as stored. */
  insert(source: Omit<SourceRow, 'enabled'> & { enabled: boolean }): Awaitable<SourceRow>
  list(): Awaitable<SourceRow[]>
  get(id: string): Awaitable<SourceRow | undefined>
  getByWriteKey(writeKey: string): Awaitable<SourceRow | undefined>
  /** Returns the row as updated, or undefined when there is no such source. */
  update(id: string, change: SourceChange): Awaitable<SourceRow | undefined>
  /** The source with its connections, messages, deliveries and attempts. */
  delete(id: string): Awaitable<boolean>
  /** Undefined when the source has no counters (yet, or no longer). */
  stats(id: string): Awaitable<SourceStats | undefined>
  countRejected(id: string, count: number): Awaitable<void>
  countSuppressed(id: string, count: number): Awaitable<void>
}

export function toSource(row: SourceRow): Source {
  return {
    id: row.id,
    name: row.name,
    writeKey: row.write_key,
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
  }
}
