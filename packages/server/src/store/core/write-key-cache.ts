/**
 * Sources found by write key, cached in front of a lookup that costs a thread hop (the SQLite store
 * thread) or a round trip (PostgreSQL): every Tracking API request looks its write key up.
 *
 * Correctness rests on invalidation, not on the expiry: the store's own `sources` change event (a key
 * rotated, a source disabled or deleted) drops the whole cache the moment it is heard — right after the
 * commit in this process, milliseconds later from other processes. So a rotated key stops working at
 * once. The expiry only bounds staleness should those events stop arriving without anyone noticing.
 */
import type { Source } from '../../domain/sources.ts'
import type { Changes } from './changes.ts'

/** How long a found source is trusted at most without asking the store again. */
const WRITE_KEY_CACHE_MS = 2_000
const WRITE_KEY_CACHE_SIZE = 10_000

export class WriteKeyCache {
  private readonly lookup: (writeKey: string) => Promise<Source | null>
  private readonly entries = new Map<string, { source: Source; until: number }>()
  /** Bumped by every invalidation, so that a lookup running across one does not cache its answer. */
  private generation = 0
  private trusted: boolean

  /**
   * `trusted: false` caches nothing until `trust(true)`: for a store that hears other processes'
   * changes only while a connection is up (PostgreSQL LISTEN).
   */
  constructor(
    lookup: (writeKey: string) => Promise<Source | null>,
    changes: Changes,
    options: { trusted: boolean } = { trusted: true },
  ) {
    this.lookup = lookup
    this.trusted = options.trusted
    changes.subscribe((event) => {
      if (event === 'sources') this.drop()
    })
  }

  async get(writeKey: string): Promise<Source | null> {
    const cached = this.entries.get(writeKey)
    if (cached && cached.until > Date.now()) return cached.source
    // An invalidation that arrives while this lookup runs must win over its (possibly stale) answer.
    const generation = this.generation
    const source = await this.lookup(writeKey)
    if (!source) this.entries.delete(writeKey)
    else if (this.trusted && generation === this.generation) {
      if (this.entries.size >= WRITE_KEY_CACHE_SIZE) this.entries.clear()
      this.entries.set(writeKey, { source, until: Date.now() + WRITE_KEY_CACHE_MS })
    }
    return source
  }

  /** Whether every source change is being heard; either way, what is cached now is dropped. */
  trust(trusted: boolean): void {
    this.trusted = trusted
    this.drop()
  }

  private drop(): void {
    this.generation++
    this.entries.clear()
  }
}
