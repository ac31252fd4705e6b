/**
 * The store contract. Every other part of the server talks to durable state only through it, so the
 * embedded SQLite store and the PostgreSQL store are interchangeable. It is the intersection of its
 * areas, each the slice one part of the server needs and each defined in the domain beside the
 * records it stores (`../domain/*-store.ts`): sources, messages (ingest and retention), destinations
 * and deliveries, privacy, profiles and computations, access tokens, and figures over time. A service
 * is given only the areas it uses, and names them in its constructor's type.
 *
 * Conventions, for every area:
 * - Every method is async, even where SQLite could answer synchronously.
 * - Times are epoch milliseconds (numbers) here; the HTTP layers render them as ISO 8601.
 * - A resolved promise from a write means the change is committed (durable).
 *
 * What a new table or a new method costs, step by step, is in ./README.md.
 */
import type { ConfigStore } from '../domain/config-store.ts'
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { HealthStore } from '../domain/health-store.ts'
import type { MessageStore } from '../domain/message-store.ts'
import type { PrivacyStore } from '../domain/privacy-store.ts'
import type { ProfileStore } from '../domain/profile-store.ts'
import type { ReplayStore } from '../domain/replay-store.ts'
import type { SeriesStore } from '../domain/series-store.ts'
import type { SourceStore } from '../domain/source-store.ts'
import type { TokenStore } from '../domain/token-store.ts'

/**
 * What `Store.watch` announces. `privacy`: a regulation changed the suppressions or erasures in force.
 * `messages`: messages were stored by this process (not announced to other processes: their profile
 * workers find them by polling).
 */
export type StoreEvent = 'deliveries' | 'config' | 'privacy' | 'messages'

/** Opening, checking and closing a store. */
export interface StoreLifecycle {
  readonly kind: 'sqlite' | 'postgres'
  /** Applies pending numbered migrations. Safe to call on every start. */
  migrate(): Promise<void>
  /** True when the store answers a trivial query. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** The store's change announcements, for the workers that wait for work. */
export interface StoreWatch {
  /**
   * Calls `listener` after every committed change that gives the delivery engine something to do:
   * `deliveries` when deliveries were created or rescheduled (an ingest that created some, a replay
   * that reset some), `config` when destinations were created, updated or deleted. Changes made through
   * this store object are announced right after their commit, before the writing call resolves; a store
   * shared by several processes (PostgreSQL) also announces the other processes' changes as they
   * arrive. Resolves, once listening, with a function that stops listening.
   */
  watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>>
}

/** Every area of the contract, by the name the store core gives its implementation (core/store-core.ts). */
export interface StoreAreas {
  sources: SourceStore
  messages: MessageStore
  deliveries: DeliveryStore
  health: HealthStore
  privacy: PrivacyStore
  profiles: ProfileStore
  tokens: TokenStore
  series: SeriesStore
  config: ConfigStore
  replays: ReplayStore
}

export interface Store
  extends StoreLifecycle,
    StoreWatch,
    SourceStore,
    MessageStore,
    DeliveryStore,
    HealthStore,
    PrivacyStore,
    ProfileStore,
    TokenStore,
    SeriesStore,
    ConfigStore,
    ReplayStore {}
