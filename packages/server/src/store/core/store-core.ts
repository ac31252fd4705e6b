/**
 * The store contract implemented once, on top of a backend's SQL (store-sql.ts): ids and timestamps,
 * row ⇄ record mapping, stats, the sweep loop, the dedupe window, change announcements and the write-key
 * cache. SqliteStore and PostgresStore are this core over their own SQL modules, so a new table or
 * statement costs its SQL once per backend and nothing else.
 */

import type { Audience, AudienceNode } from '../../domain/audiences.ts'
import type { ComputedTrait } from '../../domain/computed-traits.ts'
import { type Delivery, type DeliveryStats, LATENCY_SAMPLE } from '../../domain/deliveries.ts'
import type { Destination } from '../../domain/destinations.ts'
import { DEFAULT_DEDUPE_WINDOW_HOURS } from '../../domain/messages.ts'
import type { Profile, ProfileEvent, ProfileIdentity } from '../../domain/profiles.ts'
import { deletesData, type Regulation, type Suppression, suppressesCalls } from '../../domain/regulations.ts'
import type { MinuteFigures, SourceMinute } from '../../domain/series.ts'
import { NO_TRAFFIC_YET, type Source, type SourceStats } from '../../domain/sources.ts'
import type { AccessToken } from '../../domain/tokens.ts'
import { newId, newSecretToken } from '../../lib/ids.ts'
import { FoldCache } from '../../profile/fold.ts'
import type {
  AcceptedMessage,
  AudiencePatch,
  ClaimedDelivery,
  ClaimRequest,
  ComputedTraitPatch,
  DeliveryCountFilter,
  DeliveryListFilter,
  DeliveryOutcome,
  DestinationBacklog,
  DestinationPatch,
  ErasureScope,
  ErasureStep,
  IngestOutcome,
  NewAccessToken,
  NewAudience,
  NewComputedTrait,
  NewDestination,
  NewRegulation,
  NewSource,
  RegulationListFilter,
  ReplayFilter,
  SourcePatch,
  Store,
  StoredMessage,
  StoreEvent,
} from '../store.ts'
import { type ChangeListener, Changes } from './changes.ts'
import { COMPUTED_SOURCE_ID, type ComputationClass, type ComputationRow } from './computation-sql.ts'
import {
  type ComputationPatch,
  type EvaluationContext,
  evaluateQueued,
  newComputationRow,
  patchComputation,
  previewAudience,
  queueScopeOf,
  queueWindowEdges,
  toAudience,
  toComputations,
  toComputedTrait,
} from './computations.ts'
import { summarizeDeliveries } from './delivery-stats.ts'
import { planIngest } from './ingest-plan.ts'
import { applyMigrations } from './migrations.ts'
import {
  consumeMessages,
  DEFAULT_PROFILE_BATCH,
  findProfile,
  readProfile,
  readProfileEvents,
} from './profiles.ts'
import {
  type RegulationRow,
  regulationProgress,
  toErasureScope,
  toRegulation,
  toSuppression,
} from './regulation-rows.ts'
import { MINUTE_MS, ROLLUP_MAX_SPAN_MS, ROLLUP_SETTLE_MS } from './rollups.ts'
import {
  type ClaimRow,
  type DeliveryRow,
  settingsText,
  toAccessToken,
  toClaimedDeliveries,
  toDeliveries,
  toDestinations,
  toOutcomeRows,
  toSource,
  toStoredMessage,
} from './rows.ts'
import type { StoreSql } from './store-sql.ts'
import { sweep } from './sweep.ts'
import { WriteKeyCache } from './write-key-cache.ts'

/** How a store calls itself in messages. */
const STORE_NAMES: Record<Store['kind'], string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

/** The dedupe window when none is given: the configuration's default. */
const DEFAULT_DEDUPE_WINDOW_MS = DEFAULT_DEDUPE_WINDOW_HOURS * 3_600_000

export interface StoreCoreOptions {
  /** Messages repeating a messageId received this recently are duplicates. Default 24 h. */
  dedupeWindowMs?: number | undefined
  /** Carries this store's committed changes to other processes (PostgreSQL NOTIFY). */
  publish?: ChangeListener
  /**
   * Caches sources found by write key, for stores where a lookup is a round trip; `trusted: false`
   * starts with the cache off (see WriteKeyCache). Without it every lookup asks the SQL.
   */
  writeKeyCache?: { trusted: boolean }
}

/** `Kind` names the backend, so `SqliteStore` and `PostgresStore` are told apart by `kind`. */
export class StoreCore<Kind extends Store['kind'] = Store['kind']> implements Store {
  readonly kind: Kind
  /** Every change this store commits or hears of (a store on its own thread forwards them to the main one). */
  readonly changes: Changes
  protected readonly writeKeys: WriteKeyCache | null
  private readonly sql: StoreSql<Kind>
  private readonly dedupeWindowMs: number
  /**
   * Evaluation's folds (profile/fold.ts). They follow the calls: a merge or an erasure MUST drop the
   * folds of the profiles it touches (another process's merges are caught by the merge count).
   */
  private readonly folds = new FoldCache()

  constructor(sql: StoreSql<Kind>, options: StoreCoreOptions = {}) {
    this.sql = sql
    this.kind = sql.kind
    this.dedupeWindowMs = options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS
    this.changes = new Changes(options.publish)
    this.writeKeys = options.writeKeyCache
      ? new WriteKeyCache((writeKey) => this.lookUpWriteKey(writeKey), this.changes, options.writeKeyCache)
      : null
  }

  async migrate(): Promise<void> {
    await applyMigrations(this.sql.migrations, STORE_NAMES[this.kind])
  }

  async ping(): Promise<boolean> {
    return this.sql.ping()
  }

  async close(): Promise<void> {
    await this.sql.close()
  }

  watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    return this.changes.watch(listener)
  }

  // --- sources ---

  async createSource(input: NewSource): Promise<Source> {
    return toSource(
      await this.sql.sources.insert({
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
    return (await this.sql.sources.list()).filter((row) => row.id !== COMPUTED_SOURCE_ID).map(toSource)
  }

  async getSource(id: string): Promise<Source | null> {
    const row = await this.sql.sources.get(id)
    return row ? toSource(row) : null
  }

  getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    return this.writeKeys ? this.writeKeys.get(writeKey) : this.lookUpWriteKey(writeKey)
  }

  private async lookUpWriteKey(writeKey: string): Promise<Source | null> {
    const row = await this.sql.sources.getByWriteKey(writeKey)
    return row ? toSource(row) : null
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    const row = await this.sql.sources.update(id, {
      name: patch.name ?? null,
      enabled: patch.enabled ?? null,
      writeKey: patch.rotateWriteKey ? newSecretToken() : null,
    })
    if (!row) return null
    this.changes.committed('sources')
    return toSource(row)
  }

  async deleteSource(id: string): Promise<boolean> {
    const deleted = await this.sql.sources.delete(id)
    if (deleted) this.changes.committed('sources')
    return deleted
  }

  async getSourceStats(id: string): Promise<SourceStats> {
    return { ...((await this.sql.sources.stats(id)) ?? NO_TRAFFIC_YET) }
  }

  async countRejected(sourceId: string, count: number): Promise<void> {
    await this.sql.sources.countRejected(sourceId, count)
  }

  // --- destinations ---

  async createDestination(input: NewDestination): Promise<Destination> {
    const now = Date.now()
    const id = newId('dst')
    await this.sql.destinations.insert(
      {
        id,
        name: input.name,
        type: input.type,
        enabled: input.enabled,
        settings: settingsText(input.settings),
        created_at: now,
        updated_at: now,
      },
      input.sourceIds,
    )
    this.changes.committed('config')
    return (await this.getDestination(id))!
  }

  async listDestinations(): Promise<Destination[]> {
    const rows = await this.sql.destinations.list()
    return toDestinations(rows, await this.sql.destinations.connections())
  }

  async getDestination(id: string): Promise<Destination | null> {
    const row = await this.sql.destinations.get(id)
    if (!row) return null
    return toDestinations([row], await this.sql.destinations.connections(id))[0]!
  }

  async updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null> {
    const found = await this.sql.destinations.update(
      id,
      {
        name: patch.name ?? null,
        enabled: patch.enabled ?? null,
        settings: patch.settings ? settingsText(patch.settings) : null,
        updatedAt: Date.now(),
      },
      patch.sourceIds,
    )
    if (!found) return null
    this.changes.committed('config')
    return this.getDestination(id)
  }

  async deleteDestination(id: string): Promise<boolean> {
    const deleted = await this.sql.destinations.delete(id)
    if (deleted) this.changes.committed('config')
    return deleted
  }

  // --- ingest ---

  async ingest(messages: AcceptedMessage[]): Promise<IngestOutcome> {
    if (messages.length === 0) return { stored: [], deliveriesCreated: 0 }
    const now = Date.now()
    const outcome = await this.sql.ingest(messages, planIngest(messages), now, now - this.dedupeWindowMs)
    // Before the Tracking API's requests resolve: the delivery engine starts on them at once.
    if (outcome.deliveriesCreated > 0) this.changes.committed('deliveries')
    // The profile worker starts on them at once (other processes' workers poll).
    if (outcome.stored.includes(true)) this.changes.committedLocally('messages')
    return outcome
  }

  async getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null> {
    const row = await this.sql.messages.latest(sourceId, messageId)
    return row ? toStoredMessage(row) : null
  }

  async countMessages(sourceId?: string): Promise<number> {
    return this.sql.messages.count(sourceId)
  }

  async countDeliveries(filter: DeliveryCountFilter = {}): Promise<number> {
    return this.sql.deliveries.count(filter)
  }

  // --- deliveries ---

  async claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    return toClaimedDeliveries(destinationId, await this.claimRows({ destinationId, limit, now, leaseMs }))
  }

  /**
   * `claimDeliveries` with each message as its stored JSON text, unparsed: what the threaded SQLite
   * store sends across threads (packed; parsed on the other side).
   */
  async claimRows({ destinationId, limit, now, leaseMs }: ClaimRequest): Promise<ClaimRow[]> {
    if (limit <= 0) return []
    return this.sql.claimDeliveries(destinationId, limit, now, now + leaseMs)
  }

  async recordOutcomes(
    outcomes: DeliveryOutcome[],
    claims: ClaimRequest[] = [],
  ): Promise<ClaimedDelivery[][]> {
    const claimed = await this.recordOutcomesClaimingRows(outcomes, claims)
    return claimed.map((rows, i) => toClaimedDeliveries(claims[i]!.destinationId, rows))
  }

  /** `recordOutcomes` with the claims as `claimRows` returns them. */
  async recordOutcomesClaimingRows(
    outcomes: DeliveryOutcome[],
    claims: ClaimRequest[] = [],
  ): Promise<ClaimRow[][]> {
    if (outcomes.length === 0) return Promise.all(claims.map((claim) => this.claimRows(claim)))
    const now = Date.now()
    const specs = claims.map(({ destinationId, limit, now, leaseMs }) => ({
      destinationId,
      limit,
      now,
      leaseUntil: now + leaseMs,
    }))
    const wanted = specs.filter((spec) => spec.limit > 0)
    const claimed = await this.sql.recordOutcomes(toOutcomeRows(outcomes, now), now, wanted)
    return specs.map((spec) => (spec.limit > 0 ? claimed[wanted.indexOf(spec)]! : []))
  }

  async releaseClaims(deliveryIds: number[]): Promise<void> {
    if (deliveryIds.length > 0) await this.sql.deliveries.release(deliveryIds)
  }

  async nextDueAt(destinationId: string, now: number): Promise<number | null> {
    return this.sql.deliveries.nextDueAt(destinationId, now)
  }

  async listDeliveries(destinationId: string, filter: DeliveryListFilter): Promise<Delivery[]> {
    return this.withAttempts(await this.sql.deliveries.list(destinationId, filter))
  }

  async getDelivery(id: number): Promise<Delivery | null> {
    const row = await this.sql.deliveries.get(id)
    return row ? (await this.withAttempts([row]))[0]! : null
  }

  private async withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    if (rows.length === 0) return []
    return toDeliveries(rows, await this.sql.attempts.ofDeliveries(rows.map((row) => row.id)))
  }

  async replayDeliveries(filter: ReplayFilter, now: number): Promise<number> {
    const count = await this.sql.deliveries.replay(filter, now)
    if (count > 0) this.changes.committed('deliveries')
    return count
  }

  async deliveryStats(destinationId: string): Promise<DeliveryStats> {
    return summarizeDeliveries(
      await this.sql.deliveries.countByState(destinationId),
      await this.sql.attempts.recentLatencies(destinationId, LATENCY_SAMPLE),
    )
  }

  // --- privacy ---

  async createRegulation(input: NewRegulation): Promise<Regulation> {
    const now = Date.now()
    const deletes = deletesData(input.type)
    const row: RegulationRow = {
      id: newId('reg'),
      type: input.type,
      subject_ids: JSON.stringify(input.subjectIds),
      source_ids: input.sourceIds === null ? null : JSON.stringify(input.sourceIds),
      // Suppressing and lifting are done by the time the transaction commits.
      status: deletes ? 'INITIALIZED' : 'FINISHED',
      created_at: now,
      finished_at: deletes ? null : now,
      erasure_pending: deletes,
      erased_messages: 0,
      outcome: deletes ? null : '[]',
    }
    const queued = await this.sql.regulations.create(row, {
      userIds: input.subjectIds,
      sourceIds: input.sourceIds,
      suppress: suppressesCalls(input.type),
      unsuppress: input.type === 'UNSUPPRESS',
      notify: deletes,
    })
    // Before the caller answers: every filter in this process knows of it, the engine has the deletes.
    this.changes.committed('privacy')
    if (queued > 0) this.changes.committed('deliveries')
    return (await this.getRegulation(row.id))!
  }

  async getRegulation(id: string): Promise<Regulation | null> {
    const row = await this.sql.regulations.get(id)
    return row ? (await this.withProgress([row]))[0]! : null
  }

  async listRegulations(filter: RegulationListFilter): Promise<Regulation[]> {
    return this.withProgress(await this.sql.regulations.list(filter.status, filter.limit))
  }

  private async withProgress(rows: RegulationRow[]): Promise<Regulation[]> {
    const open = rows.filter((row) => row.outcome === null).map((row) => row.id)
    const counts = open.length > 0 ? await this.sql.regulations.notificationCounts(open) : []
    return rows.map((row) =>
      toRegulation(
        row,
        counts.filter((count) => count.regulation_id === row.id),
      ),
    )
  }

  async listSuppressions(): Promise<Suppression[]> {
    return (await this.sql.regulations.suppressions()).map(toSuppression)
  }

  async privacyVersion(): Promise<string> {
    const { n, newest } = await this.sql.regulations.version()
    return `${n}:${newest ?? 0}`
  }

  async recentErasures(since: number): Promise<ErasureScope[]> {
    return (await this.sql.regulations.recentErasures(since)).map(toErasureScope)
  }

  async eraseNext(limit: number): Promise<ErasureStep | null> {
    const step = await this.sql.regulations.eraseNext(limit)
    return step && { regulationId: step.id, erased: step.erased, done: step.done }
  }

  async eraseProfilesOfDeletions(): Promise<number> {
    const due = await this.sql.regulations.profileErasuresDue()
    for (const row of due) {
      const { userIds, sourceIds } = toErasureScope(row)
      const erased = await this.eraseProfilesOfUsers(userIds, sourceIds ?? undefined)
      await this.sql.regulations.recordErasedProfiles(row.id, erased)
    }
    return due.length
  }

  async settleRegulations(now: number): Promise<number> {
    const rows = await this.sql.regulations.unfinished()
    if (rows.length === 0) return 0
    const counts = await this.sql.regulations.notificationCounts(rows.map((row) => row.id))
    let finished = 0
    for (const row of rows) {
      const { status, destinations } = regulationProgress(
        row,
        counts.filter((count) => count.regulation_id === row.id),
      )
      if (status === row.status) continue
      const final = status !== 'RUNNING'
      // Frozen when final: retention may later remove the notifications the counts come from.
      await this.sql.regulations.setStatus(
        row.id,
        status,
        final ? now : null,
        final ? JSON.stringify(destinations) : null,
      )
      if (final) finished++
    }
    return finished
  }

  async countSuppressed(sourceId: string, count: number): Promise<void> {
    await this.sql.sources.countSuppressed(sourceId, count)
  }

  async deliveryBacklog(): Promise<DestinationBacklog[]> {
    const byDestination = new Map<string, DestinationBacklog>()
    for (const row of await this.sql.deliveries.backlog()) {
      let backlog = byDestination.get(row.destination_id)
      if (!backlog) {
        backlog = { destinationId: row.destination_id, pending: 0, retrying: 0, oldestDueAt: null }
        byDestination.set(row.destination_id, backlog)
      }
      backlog[row.status] = Number(row.n)
      const due = Number(row.oldest_due_at)
      backlog.oldestDueAt = backlog.oldestDueAt === null ? due : Math.min(backlog.oldestDueAt, due)
    }
    return [...byDestination.values()]
  }

  // --- delivery figures over time ---

  async rollUpDeliveries(now: number): Promise<number> {
    const end = floorMinute(now - ROLLUP_SETTLE_MS)
    const from =
      (await this.sql.rollups.through()) ?? floorMinute((await this.sql.rollups.earliestAttempt()) ?? end)
    if (from >= end) return 0
    return this.sql.rollups.rollUp(from, Math.min(end, from + ROLLUP_MAX_SPAN_MS))
  }

  async deliveryMinutes(destinationId: string, from: number, to: number): Promise<MinuteFigures[]> {
    const start = floorMinute(from)
    // Before the first roll-up everything is read from the attempts themselves.
    const through = (await this.sql.rollups.through()) ?? start
    const rolled =
      start < through ? await this.sql.rollups.rows(destinationId, start, Math.min(to, through)) : []
    const live = to > through ? await this.sql.rollups.live(destinationId, Math.max(start, through), to) : []
    return [...rolled, ...live]
  }

  async sourceMinutes(sourceId: string, from: number, to: number): Promise<SourceMinute[]> {
    return this.sql.rollups.sourceMinutes(sourceId, floorMinute(from), to)
  }

  // --- access tokens ---

  async createToken(input: NewAccessToken): Promise<AccessToken> {
    const row = {
      id: newId('tok'),
      name: input.name,
      role: input.role,
      token_hash: input.tokenHash,
      created_at: Date.now(),
      last_used_at: null,
    }
    await this.sql.tokens.insert(row)
    return toAccessToken(row)
  }

  async listTokens(): Promise<AccessToken[]> {
    return (await this.sql.tokens.list()).map(toAccessToken)
  }

  async getToken(id: string): Promise<AccessToken | null> {
    const row = await this.sql.tokens.get(id)
    return row ? toAccessToken(row) : null
  }

  async findTokenByHash(tokenHash: string): Promise<AccessToken | null> {
    const row = await this.sql.tokens.getByHash(tokenHash)
    return row ? toAccessToken(row) : null
  }

  async touchToken(id: string, at: number): Promise<void> {
    await this.sql.tokens.touch(id, at)
  }

  async deleteToken(id: string): Promise<boolean> {
    return this.sql.tokens.delete(id)
  }

  // --- profiles ---

  consumeIntoProfiles(limit = DEFAULT_PROFILE_BATCH, now = Date.now()): Promise<number> {
    return consumeMessages(this.sql.profiles, this.sql.computations, limit, now, (merged) =>
      this.folds.delete(merged),
    )
  }

  async getProfile(id: string): Promise<Profile | null> {
    const profile = await readProfile(this.sql.profiles, id)
    if (profile === null) return null
    const rows = new Map((await this.sql.computations.list()).map((row) => [row.id, row]))
    for (const value of await this.sql.computations.values([profile.id])) {
      const row = rows.get(value.computation_id)
      if (row?.class === 'computed_trait') profile.computedTraits[row.key] = JSON.parse(value.value)
      else if (row?.class === 'audience') profile.audiences.push(row.key)
    }
    profile.audiences.sort()
    return profile
  }

  async findProfile(identity: ProfileIdentity): Promise<Profile | null> {
    const found = await findProfile(this.sql.profiles, identity)
    return found === null ? null : this.getProfile(found.id)
  }

  listProfileEvents(
    profileId: string,
    page: { limit: number; before?: number | undefined },
  ): Promise<{ events: ProfileEvent[]; next: number | null }> {
    return readProfileEvents(this.sql.profiles, profileId, page)
  }

  async eraseProfilesOfUsers(userIds: string[], sourceIds?: string[]): Promise<number> {
    if (userIds.length === 0 || sourceIds?.length === 0) return 0
    const erased = await this.sql.profiles.erase(userIds, sourceIds ?? null)
    // Erasure deletes calls: no fold may still count them. Rare enough to start every fold over.
    this.folds.clear()
    return erased
  }

  // --- computed traits and audiences ---

  async createComputedTrait(input: NewComputedTrait): Promise<ComputedTrait | null> {
    const { name, key, destinationIds, ...definition } = input
    const row = newComputationRow(
      'computed_trait',
      { id: newId('ctr'), name, key, destinationIds, now: Date.now() },
      definition,
    )
    return (await this.sql.computations.insert(row, queueScopeOf(row))) ? toComputedTrait(row) : null
  }

  async listComputedTraits(): Promise<ComputedTrait[]> {
    return toComputations(await this.sql.computations.list()).traits
  }

  async getComputedTrait(id: string): Promise<ComputedTrait | null> {
    const row = await this.computation(id, 'computed_trait')
    return row ? toComputedTrait(row) : null
  }

  async updateComputedTrait(id: string, patch: ComputedTraitPatch): Promise<ComputedTrait | null> {
    const { definition, ...rest } = patch
    return (await this.updateComputation(id, 'computed_trait', {
      ...rest,
      ...(definition === undefined ? {} : { definition }),
    }))
      ? this.getComputedTrait(id)
      : null
  }

  async deleteComputedTrait(id: string): Promise<boolean> {
    return (await this.computation(id, 'computed_trait')) !== null && (await this.sql.computations.delete(id))
  }

  async createAudience(input: NewAudience): Promise<Audience | null> {
    const { name, key, destinationIds, definition, includeAnonymous } = input
    const row = newComputationRow(
      'audience',
      { id: newId('aud'), name, key, destinationIds, now: Date.now() },
      {
        tree: definition,
        includeAnonymous,
      },
    )
    return (await this.sql.computations.insert(row, queueScopeOf(row))) ? toAudience(row) : null
  }

  async listAudiences(): Promise<Audience[]> {
    return toComputations(await this.sql.computations.list()).audiences
  }

  async getAudience(id: string): Promise<Audience | null> {
    const row = await this.computation(id, 'audience')
    return row ? toAudience(row) : null
  }

  async updateAudience(id: string, patch: AudiencePatch): Promise<Audience | null> {
    const { definition, includeAnonymous, ...rest } = patch
    const row = definition === undefined && includeAnonymous === undefined ? null : await this.getAudience(id)
    const tree =
      row === null
        ? {}
        : {
            definition: {
              tree: definition ?? row.definition,
              includeAnonymous: includeAnonymous ?? row.includeAnonymous,
            },
          }
    return (await this.updateComputation(id, 'audience', { ...rest, ...tree })) ? this.getAudience(id) : null
  }

  async deleteAudience(id: string): Promise<boolean> {
    return (await this.computation(id, 'audience')) !== null && (await this.sql.computations.delete(id))
  }

  previewAudience(
    definition: AudienceNode,
    options: { includeAnonymous: boolean; sampleSize: number },
  ): Promise<{ size: number; sample: string[] }> {
    return previewAudience(
      { ...this.evaluationContext(), page: (afterId, limit) => this.sql.profiles.page(afterId, limit) },
      definition,
      options.includeAnonymous,
      options.sampleSize,
      Date.now(),
    )
  }

  async computationSize(id: string): Promise<number> {
    return this.sql.computations.size(id)
  }

  private async computation(id: string, computationClass: ComputationClass): Promise<ComputationRow | null> {
    const row = await this.sql.computations.get(id)
    return row?.class === computationClass ? row : null
  }

  private async updateComputation(
    id: string,
    computationClass: ComputationClass,
    patch: ComputationPatch,
  ): Promise<boolean> {
    const row = await this.computation(id, computationClass)
    if (row === null) return false
    const { change, scope } = patchComputation(row, patch, Date.now())
    return this.sql.computations.update(id, change, scope)
  }

  async evaluateComputations(
    limit = DEFAULT_PROFILE_BATCH,
    now = Date.now(),
  ): Promise<{ evaluated: number; deliveriesCreated: number }> {
    const result = await evaluateQueued(this.evaluationContext(), limit, now)
    if (result.deliveriesCreated > 0) this.changes.committed('deliveries')
    return result
  }

  private evaluationContext(): EvaluationContext {
    return {
      sql: this.sql.computations,
      identitiesOf: (profileIds) => this.sql.profiles.identitiesOf(profileIds),
      profiles: (profileIds) => this.sql.profiles.profiles(profileIds),
      destinations: () => this.listDestinations(),
      folds: this.folds,
    }
  }

  queueWindowEdges(after: number, upTo: number): Promise<number> {
    return queueWindowEdges(this.sql.computations, after, upTo)
  }

  // --- housekeeping ---

  sweep(olderThan: number): Promise<{ messages: number }> {
    return sweep(this.sql.sweep, olderThan, this.dedupeWindowMs)
  }
}

function floorMinute(at: number): number {
  return Math.floor(at / MINUTE_MS) * MINUTE_MS
}
