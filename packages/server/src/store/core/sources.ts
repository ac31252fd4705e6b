/** The sources area of the store core (domain/source-store.ts): sources, write keys, counters. */
import { createHash } from 'node:crypto'
import type { NewSource, SourcePatch, SourceStore } from '../../domain/source-store.ts'
import { NO_TRAFFIC_YET, type Source, type SourceStats } from '../../domain/sources.ts'
import { newId, newSecretToken } from '../../lib/ids.ts'
import { COMPUTED_SOURCE_ID } from '../tables/computations.ts'
import { type SourceRow, type SourcesSql, toSource } from '../tables/sources.ts'
import type { Changes } from './changes.ts'
import { StoredSecrets } from './stored-secrets.ts'
import type { WriteKeyCache } from './write-key-cache.ts'

export class SourcesCore implements SourceStore {
  readonly #sql: SourcesSql
  readonly #changes: Changes
  readonly #writeKeys: WriteKeyCache | null
  readonly #secrets: StoredSecrets

  /** Without `writeKeys`, every lookup by write key asks the SQL. `secrets`: how write keys are kept at rest. */
  constructor(
    sql: SourcesSql,
    changes: Changes,
    writeKeys: WriteKeyCache | null,
    secrets: StoredSecrets = new StoredSecrets(null),
  ) {
    this.#sql = sql
    this.#changes = changes
    this.#writeKeys = writeKeys
    this.#secrets = secrets
  }

  async createSource(input: NewSource): Promise<Source> {
    const id = newId('src')
    const writeKey = newSecretToken()
    return this.#source(
      await this.#sql.insert({
        id,
        name: input.name,
        write_key: this.#secrets.seal(writeKey, id),
        write_key_hash: writeKeyHash(writeKey),
        enabled: input.enabled,
        created_at: Date.now(),
      }),
    )
  }

  async listSources(): Promise<Source[]> {
    // The source sync messages are stored under is Sluice's own (004_profiles.sql), not the user's.
    return (await this.#sql.list())
      .filter((row) => row.id !== COMPUTED_SOURCE_ID)
      .map((row) => this.#source(row))
  }

  async getSource(id: string): Promise<Source | null> {
    const row = await this.#sql.get(id)
    return row ? this.#source(row) : null
  }

  getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    return this.#writeKeys
      ? this.#writeKeys.get(writeKey)
      : lookUpWriteKey(this.#sql, this.#secrets, writeKey)
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    const writeKey = patch.rotateWriteKey ? newSecretToken() : null
    const row = await this.#sql.update(id, {
      name: patch.name ?? null,
      enabled: patch.enabled ?? null,
      writeKey:
        writeKey === null ? null : { stored: this.#secrets.seal(writeKey, id), hash: writeKeyHash(writeKey) },
    })
    if (!row) return null
    this.#changes.committed('sources')
    return this.#source(row)
  }

  /**
   * Seals with the current secret key every write key stored in clear or under an older key, and
   * gives each row stored before lookups by hash its hash; each only if unchanged meanwhile. Run by
   * `migrate`; throws when a write key was sealed with a key that is not configured.
   */
  async resealWriteKeys(): Promise<number> {
    let resealed = 0
    for (const row of await this.#sql.list()) {
      const writeKey = openedWriteKey(this.#secrets, row)
      if (!this.#secrets.stale(row.write_key) && row.write_key_hash !== null) continue
      const stored = this.#secrets.seal(writeKey, row.id)
      if (await this.#sql.replaceWriteKey(row.id, row.write_key, stored, writeKeyHash(writeKey))) resealed++
    }
    return resealed
  }

  #source(row: SourceRow): Source {
    return toSource(row, openedWriteKey(this.#secrets, row))
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
export async function lookUpWriteKey(
  sql: SourcesSql,
  secrets: StoredSecrets,
  writeKey: string,
): Promise<Source | null> {
  const row = await sql.getByWriteKeyHash(writeKeyHash(writeKey))
  return row ? toSource(row, openedWriteKey(secrets, row)) : null
}

/** What lookups by write key compare: its SHA-256, hex (write keys are 256 random bits). */
export function writeKeyHash(writeKey: string): string {
  return createHash('sha256').update(writeKey).digest('hex')
}

function openedWriteKey(secrets: StoredSecrets, row: SourceRow): string {
  return secrets.open(row.write_key, row.id, `source ${row.id}'s write key`)
}
