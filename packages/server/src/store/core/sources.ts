/** The sources area of the store core (domain/source-store.ts): sources, write keys, counters. */
import type { NewSource, SourcePatch, SourceStore } from '../../domain/source-store.ts'
import { NO_TRAFFIC_YET, type Source, type SourceStats } from '../../domain/sources.ts'
import { newId, newSecretToken } from '../../lib/ids.ts'
import { COMPUTED_SOURCE_ID } from '../tables/computations.ts'
import { type SourcesSql, toSource } from '../tables/sources.ts'
import type { Changes } from './changes.ts'
import type { WriteKeyCache } from './write-key-cache.ts'

export class SourcesCore implements SourceStore {
  readonly #sql: SourcesSql
  readonly #changes: Changes
  readonly #writeKeys: WriteKeyCache | null

  /** Without `writeKeys`, every lookup by write key asks the SQL. */
  constructor(sql: SourcesSql, changes: Changes, writeKeys: WriteKeyCache | null) {
    this.#sql = sql
    this.#changes = changes
    this.#writeKeys = writeKeys
  }

  async createSource(input: NewSource): Promise<Source> {
    return toSource(
      await this.#sql.insert({
        id: newId('src'),
        name: input.name,
        write_key: newSecretToken(),
        enabled: input.enabled,
        created_at: Date.now(),
      }),
    )
  }

  async listSources(): Promise<Source[]> {
    // The source sync messages are stored under is Sluice's own (004_profiles.sql), not the user's.
    return (await this.#sql.list()).filter((row) => row.id !== COMPUTED_SOURCE_ID).map(toSource)
  }

  async getSource(id: string): Promise<Source | null> {
    const row = await this.#sql.get(id)
    return row ? toSource(row) : null
  }

  getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    return this.#writeKeys ? this.#writeKeys.get(writeKey) : lookUpWriteKey(this.#sql, writeKey)
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    const row = await this.#sql.update(id, {
      name: patch.name ?? null,
      enabled: patch.enabled ?? null,
      writeKey: patch.rotateWriteKey ? newSecretToken() : null,
    })
    if (!row) return null
    this.#changes.committed('sources')
    return toSource(row)
  }

  async deleteSource(id: string): Promise<boolean> {
    const deleted = await this.#sql.delete(id)
    if (deleted) this.#changes.committed('sources')
    return deleted
  }

  async getSourceStats(id: string): Promise<SourceStats> {
    return { ...((await this.#sql.stats(id)) ?? NO_TRAFFIC_YET) }
  }

  async countRejected(sourceId: string, count: number): Promise<void> {
    await this.#sql.countRejected(sourceId, count)
  }

  async countSuppressed(sourceId: string, count: number): Promise<void> {
    await this.#sql.countSuppressed(sourceId, count)
  }
}

/** The source with this write key, asked of the SQL (what the write-key cache asks on a miss). */
export async function lookUpWriteKey(sql: SourcesSql, writeKey: string): Promise<Source | null> {
  const row = await sql.getByWriteKey(writeKey)
  return row ? toSource(row) : null
}
