/**
 * Change announcements: what a store tells the rest of the process after it committed a change, and
 * what it hears of changes committed elsewhere (another process sharing PostgreSQL, or the store's own
 * worker thread). The delivery engine hears `deliveries` and `config` through `Store.watch`; `sources`
 * stays inside the store, where it drops the write-key caches (write-key-cache.ts).
 */
import type { StoreEvent } from '../store.ts'

/** Every announced change: the contract's events, plus `sources` (a source was changed or deleted). */
export type ChangeEvent = StoreEvent | 'sources'
export const CHANGE_EVENTS: readonly ChangeEvent[] = [
  'deliveries',
  'config',
  'privacy',
  'sources',
  'messages',
]

export type ChangeListener = (event: ChangeEvent) => void

export class Changes {
  private readonly listeners = new Set<ChangeListener>()
  private readonly publish: ChangeListener

  /** `publish` carries this store's own commits further: to other processes (PostgreSQL NOTIFY). */
  constructor(publish: ChangeListener = () => {}) {
    this.publish = publish
  }

  /** Returns a function that unsubscribes. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /**
   * This store committed a change. Call it right after the commit and before the writing call
   * resolves: listeners in this process hear it at once (no later than the caller), then it is
   * published.
   */
  committed(event: ChangeEvent): void {
    this.tell(event)
    this.publish(event)
  }

  /** A change this store committed that only this process's listeners need to hear (never published). */
  committedLocally(event: ChangeEvent): void {
    this.tell(event)
  }

  /** A change committed elsewhere: listeners in this process only (it is never published again). */
  heard(event: ChangeEvent): void {
    this.tell(event)
  }

  /** `Store.watch` on these changes: the contract's events only. */
  async watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    const unsubscribe = this.subscribe((event) => {
      if (event !== 'sources') listener(event)
    })
    return async () => unsubscribe()
  }

  private tell(event: ChangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        // A listener's bug MUST NOT make a committed write look failed to its caller (who would retry
        // it): it is rethrown outside the write, as an uncaught error of its own.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
}
