/**
 * The store contract implemented once, on top of a backend's SQL (store-sql.ts). Each area of the
 * contract has its own part of the core, beside it in this folder — sources.ts, messages.ts,
 * deliveries.ts, privacy.ts, profiles.ts, tokens.ts, series.ts — which maps rows to records with its
 * tables' modules (../tables/) and calls their SQL; this class holds what they share (change
 * announcements, the write-key cache, the dedupe window) and answers every contract method with the
 * area that implements it. SqliteStore and PostgresStore are this core over their own SQL modules.
 *
 * What a new table costs — its migration and SQL module in each backend, its module in ../tables/,
 * and its area's methods in the contract and here — is listed step by step in ../README.md.
 */
import type { ConfigStore } from '../../domain/config-store.ts'
import type { ClaimRequest, DeliveryOutcome, DeliveryStore } from '../../domain/delivery-store.ts'
import type { HealthStore } from '../../domain/health-store.ts'
import type { MessageStore } from '../../domain/message-store.ts'
import { DEFAULT_DEDUPE_WINDOW_HOURS } from '../../domain/messages.ts'
import type { PrivacyStore } from '../../domain/privacy-store.ts'
import type { ProfileStore } from '../../domain/profile-store.ts'
import type { ReplayStore } from '../../domain/replay-store.ts'
import type { SeriesStore } from '../../domain/series-store.ts'
import type { SourceStore } from '../../domain/source-store.ts'
import type { TokenStore } from '../../domain/token-store.ts'
import { SecretBox } from '../../lib/secret-box.ts'
import type { Store, StoreAreas, StoreEvent, StoreLifecycle, StoreWatch } from '../store.ts'
import type { ClaimRow } from '../tables/deliveries.ts'
import type { CandidateRow, ClaimedBatchRows } from '../tables/delivery-batches.ts'
import { batchCandidateRows, claimBatchRows } from './batch-rows.ts'
import { type ChangeListener, Changes } from './changes.ts'
import { ConfigCore } from './config.ts'
import { claimRows, DeliveriesCore, recordOutcomesClaimingRows } from './deliveries.ts'
import { HealthCore } from './health.ts'
import { MessagesCore } from './messages.ts'
import { applyMigrations } from './migrations.ts'
import { PrivacyCore } from './privacy.ts'
import type { ProfileRulesFactory } from './profile-rules.ts'
import { ProfilesCore } from './profiles.ts'
import { ReplaysCore } from './replays.ts'
import { SeriesCore } from './series.ts'
import { lookUpWriteKey, SourcesCore } from './sources.ts'
import type { StoreSql } from './store-sql.ts'
import { StoredSecrets } from './stored-secrets.ts'
import { TokensCore } from './tokens.ts'
import { WriteKeyCache } from './write-key-cache.ts'

/**
 * Each area's part of the core. Every public method of these classes is a contract method and is
 * answered by StoreCore (see its static block), so their helpers are `#private`.
 */
export const AREAS = {
  sources: SourcesCore,
  messages: MessagesCore,
  deliveries: DeliveriesCore,
  health: HealthCore,
  privacy: PrivacyCore,
  profiles: ProfilesCore,
  tokens: TokensCore,
  series: SeriesCore,
  config: ConfigCore,
  replays: ReplaysCore,
} satisfies { [Area in keyof StoreAreas]: abstract new (...args: never[]) => StoreAreas[Area] }

type Areas = { [Area in keyof typeof AREAS]: InstanceType<(typeof AREAS)[Area]> }

/** The contract methods the areas answer (everything but the lifecycle and `watch`). */
export type AreaMethod = { [Area in keyof StoreAreas]: keyof StoreAreas[Area] }[keyof StoreAreas]

// Every contract method belongs to an area or to StoreCore itself: a method added to `Store` outside
// every area does not compile here.
const _everyMethodHasAHome: [
  Exclude<keyof Store, AreaMethod | keyof StoreLifecycle | keyof StoreWatch>,
] extends [never]
  ? true
  : never = true

/** The names of the areas' methods, as the core answers them (what ThreadedSqliteStore forwards). */
export function areaMethods(): AreaMethod[] {
  return Object.values(AREAS).flatMap((area) => methodsOf(area)) as AreaMethod[]
}

function methodsOf(area: { prototype: object }): string[] {
  return Object.getOwnPropertyNames(area.prototype).filter((name) => name !== 'constructor')
}

/** How a store calls itself in messages. */
const STORE_NAMES: Record<Store['kind'], string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

/** The dedupe window when none is given: the configuration's default. */
const DEFAULT_DEDUPE_WINDOW_MS = DEFAULT_DEDUPE_WINDOW_HOURS * 3_600_000

/** Secret keys as the store is given them: base64 of 32 bytes each. */
export interface SecretKeys {
  current: string
  previous?: string | undefined
}

export interface StoreCoreOptions {
  /** Messages repeating a messageId received this recently are duplicates. Default 24 h. */
  dedupeWindowMs?: number | undefined
  /**
   * The keys destinations' settings are encrypted with at rest (lib/secret-box.ts), base64 of 32 bytes
   * each: `current` seals and opens, `previous` (during a rotation) only opens. Default: none, settings
   * stored in clear (the server always gives one: store/secret-keys.ts).
   */
  secretKeys?: SecretKeys | undefined
  /** Carries this store's committed changes to other processes (PostgreSQL NOTIFY). */
  publish?: ChangeListener
  /**
   * Caches sources found by write key, for stores where a lookup is a round trip; `trusted: false`
   * starts with the cache off (see WriteKeyCache). Without it every lookup asks the SQL.
   */
  writeKeyCache?: { trusted: boolean }
  /**
   * The profile module's rules, run inside this store's profile steps (profile-rules.ts). Required: the
   * backends' composition roots pass `profileRules` (profile/store-rules.ts).
   */
  profileRules: ProfileRulesFactory
}

// The areas' methods are defined on the prototype by the static block below, one forwarder per method
// of each area class, which `AREAS` checks against the contract.
// biome-ignore lint/correctness/noUnusedVariables: a merged declaration repeats the class's type parameters.
export interface StoreCore<Kind extends Store['kind'] = Store['kind']>
  extends SourceStore,
    MessageStore,
    DeliveryStore,
    HealthStore,
    PrivacyStore,
    ProfileStore,
    TokenStore,
    SeriesStore,
    ConfigStore,
    ReplayStore {}

/** `Kind` names the backend, so `SqliteStore` and `PostgresStore` are told apart by `kind`. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the static block defines every merged method (see above).
export class StoreCore<Kind extends Store['kind'] = Store['kind']> implements Store {
  readonly kind: Kind
  /** Every change this store commits or hears of (a store on its own thread forwards them to the main one). */
  readonly changes: Changes
  protected readonly writeKeys: WriteKeyCache | null
  protected readonly areas: Areas
  readonly #sql: StoreSql<Kind>

  static {
    for (const [area, implementation] of Object.entries(AREAS)) {
      for (const method of methodsOf(implementation)) {
        if (method in StoreCore.prototype) throw new Error(`Two parts of the store core define ${method}.`)
        Object.defineProperty(StoreCore.prototype, method, {
          value: function (this: StoreCore, ...args: unknown[]) {
            const part = this.areas[area as keyof Areas] as unknown as Record<
              string,
              (...a: unknown[]) => unknown
            >
            return part[method]!(...args)
          },
          writable: true,
          configurable: true,
        })
      }
    }
  }

  constructor(sql: StoreSql<Kind>, options: StoreCoreOptions) {
    this.#sql = sql
    this.kind = sql.kind
    this.changes = new Changes(options.publish)
    this.writeKeys = options.writeKeyCache
      ? new WriteKeyCache(
          (writeKey) => lookUpWriteKey(sql.sources, secrets, writeKey),
          this.changes,
          options.writeKeyCache,
        )
      : null
    const secrets = new StoredSecrets(
      options.secretKeys
        ? new SecretBox(
            Buffer.from(options.secretKeys.current, 'base64'),
            options.secretKeys.previous === undefined
              ? undefined
              : Buffer.from(options.secretKeys.previous, 'base64'),
          )
        : null,
    )
    const deliveries = new DeliveriesCore(sql, this.changes, secrets)
    const profileRules = options.profileRules({
      profiles: sql.profiles,
      computations: sql.computations,
      destinations: () => deliveries.listDestinations(),
    })
    const profiles = new ProfilesCore(sql, profileRules, this.changes)
    this.areas = {
      sources: new SourcesCore(sql.sources, this.changes, this.writeKeys, secrets),
      messages: new MessagesCore(sql, this.changes, options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS),
      deliveries,
      health: new HealthCore(sql, this.changes, secrets),
      privacy: new PrivacyCore(sql.regulations, this.changes, (userIds, sourceIds) =>
        profiles.eraseProfilesOfUsers(userIds, sourceIds),
      ),
      profiles,
      tokens: new TokensCore(sql.tokens),
      series: new SeriesCore(sql.rollups),
      config: new ConfigCore(sql, profileRules, this.changes, secrets),
      replays: new ReplaysCore(sql, this.changes),
    }
  }

  /** Applies the migrations, then seals with the current key every secret stored in clear or under an older one. */
  async migrate(): Promise<void> {
    await applyMigrations(this.#sql.migrations, STORE_NAMES[this.kind])
    await this.areas.deliveries.resealSecrets()
    await this.areas.sources.resealWriteKeys()
    await this.areas.health.resealAlertSettings()
  }

  async ping(): Promise<boolean> {
    return this.#sql.ping()
  }

  async close(): Promise<void> {
    await this.#sql.close()
  }

  watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    return this.changes.watch(listener)
  }

  /**
   * `claimDeliveries` with each message as its stored JSON text, unparsed: what the threaded SQLite
   * store sends across threads (packed; parsed on the other side).
   */
  claimRows(claim: ClaimRequest): Promise<ClaimRow[]> {
    return claimRows(this.#sql, claim)
  }

  /** `batchCandidates` with each message as its stored JSON text, unparsed (as `claimRows`). */
  batchCandidateRows(destinationId: string, limit: number, now: number): Promise<CandidateRow[]> {
    return batchCandidateRows(this.#sql, destinationId, limit, now)
  }

  /** `claimBatches` with each member's message as its stored JSON text, unparsed (as `claimRows`). */
  claimBatchRows(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedBatchRows> {
    return claimBatchRows(this.#sql, destinationId, limit, now, leaseMs)
  }

  /** `recordOutcomes` with the claims as `claimRows` returns them. */
  recordOutcomesClaimingRows(
    outcomes: DeliveryOutcome[],
    claims: ClaimRequest[] = [],
  ): Promise<ClaimRow[][]> {
    return recordOutcomesClaimingRows(this.#sql, outcomes, claims)
  }
}
