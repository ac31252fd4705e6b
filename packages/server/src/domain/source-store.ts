/**
 * What sources ask of storage: the sources, their write keys and their counters. One area of the store
 * contract (store/store.ts holds it whole, with its conventions: every method is async, times are
 * epoch ms, a resolved write is committed); the store implements it in store/core/sources.ts.
 */
import type { Source, SourceStats } from './sources.ts'

export interface NewSource {
  name: string
  enabled: boolean
}

export interface SourcePatch {
  name?: string
  enabled?: boolean
  /** When true, a new write key replaces the old one, which stops working at once. */
  rotateWriteKey?: boolean
}

export interface SourceStore {
  createSource(input: NewSource): Promise<Source>
  listSources(): Promise<Source[]>
  getSource(id: string): Promise<Source | null>
  getSourceByWriteKey(writeKey: string): Promise<Source | null>
  updateSource(id: string, patch: SourcePatch): Promise<Source | null>
  /** Deletes the source, its connections, and its stored messages and deliveries. */
  deleteSource(id: string): Promise<boolean>
  getSourceStats(id: string): Promise<SourceStats>
  /** Adds to the persistent rejected-message counter of a source. */
  countRejected(sourceId: string, count: number): Promise<void>
  /** Adds to the persistent suppressed-message counter of a source. */
  countSuppressed(sourceId: string, count: number): Promise<void>
  /**
   * Seals with the current secret key every write key stored in clear or under the previous key, and
   * gives rows stored before lookups by hash their hash, each only if unchanged meanwhile; answers how
   * many. Throws when a write key was sealed with a key that is not configured. Run by `migrate`.
   */
  resealWriteKeys(): Promise<number>
}
