/**
 * The destinations-and-deliveries area of the store core (domain/delivery-store.ts): destinations with
 * their connections, and deliveries claimed, recorded, listed, replayed and counted.
 */
import { type Delivery, type DeliveryStats, LATENCY_SAMPLE } from '../../domain/deliveries.ts'
import type {
  BatchCandidate,
  BatchOutcome,
  ClaimedBatch,
  ClaimedDelivery,
  ClaimRequest,
  DeliveryCountFilter,
  DeliveryListFilter,
  DeliveryOutcome,
  DeliveryStore,
  DestinationBacklog,
  DestinationGatedCounts,
  DestinationPatch,
  FormedBatch,
  NewDestination,
  ReplayFilter,
} from '../../domain/delivery-store.ts'
import type { Destination, WebhooksSettings } from '../../domain/destinations.ts'
import { newId } from '../../lib/ids.ts'
import {
  type ClaimRow,
  type DeliveryRow,
  toBacklogs,
  toClaimedDeliveries,
  toDeliveries,
  toDeliveryStats,
  toOutcomeRows,
} from '../tables/deliveries.ts'
import { toBatchCandidates, toBatchOutcomeRows, toClaimedBatches } from '../tables/delivery-batches.ts'
import { type DestinationRow, routingText, settingsText, toDestinations } from '../tables/destinations.ts'
import { batchCandidateRows, claimBatchRows } from './batch-rows.ts'
import type { Changes } from './changes.ts'
import type { StoreSql } from './store-sql.ts'
import { StoredSecrets } from './stored-secrets.ts'

/** The SQL this area runs. */
type DeliveryTables = Pick<
  StoreSql,
  'destinations' | 'deliveries' | 'deliveryBatches' | 'attempts' | 'claimDeliveries' | 'recordOutcomes'
>

export class DeliveriesCore implements DeliveryStore {
  readonly #sql: DeliveryTables
  readonly #changes: Changes
  readonly #secrets: StoredSecrets

  /** `secrets`: how settings are kept at rest (sealed, or in clear). */
  constructor(sql: DeliveryTables, changes: Changes, secrets: StoredSecrets = new StoredSecrets(null)) {
    this.#sql = sql
    this.#changes = changes
    this.#secrets = secrets
  }

  /** The settings column as stored: sealed for this destination when there is a key. */
  #sealed(destinationId: string, settings: WebhooksSettings): string {
    return this.#secrets.seal(settingsText(settings), destinationId)
  }

  /** Rows with their settings column opened (read as plain JSON text). */
  #opened(rows: DestinationRow[]): DestinationRow[] {
    return rows.map((row) => ({ ...row, settings: this.#open(row) }))
  }

  #open(row: DestinationRow): string {
    return this.#secrets.open(row.settings, row.id, `destination ${row.id}'s settings`)
  }

  async resealSecrets(): Promise<number> {
    let resealed = 0
    for (const row of await this.#sql.destinations.list()) {
      // Opened first, even when current: a value no configured key opens stops the start here.
      const plain = this.#open(row)
      if (!this.#secrets.stale(row.settings)) continue
      const sealed = this.#secrets.seal(plain, row.id)
      // Only if unchanged meanwhile (another process resealing, or an update): never undoes a change.
      if (await this.#sql.destinations.replaceSettings(row.id, row.settings, sealed)) resealed++
    }
    return resealed
  }

  // --- destinations ---

  async createDestination(input: NewDestination): Promise<Destination> {
    const now = Date.now()
    const id = newId('dst')
    await this.#sql.destinations.insert(
      {
        id,
        name: input.name,
        type: input.type,
        enabled: input.enabled,
        settings: this.#sealed(id, input.settings),
        routing: routingText(input.settings),
        created_at: now,
        updated_at: now,
      },
      input.sourceIds,
    )
    this.#changes.committed('config')
    return (await this.getDestination(id))!
  }

  async listDestinations(): Promise<Destination[]> {
    const rows = await this.#sql.destinations.list()
    return toDestinations(this.#opened(rows), await this.#sql.destinations.connections())
  }

  async getDestination(id: string): Promise<Destination | null> {
    const row = await this.#sql.destinations.get(id)
    if (!row) return null
    return toDestinations(this.#opened([row]), await this.#sql.destinations.connections(id))[0]!
  }

  async updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null> {
    const found = await this.#sql.destinations.update(
      id,
      {
        name: patch.name ?? null,
        enabled: patch.enabled ?? null,
        settings: patch.settings ? this.#sealed(id, patch.settings) : null,
        routing: patch.settings ? routingText(patch.settings) : null,
        updatedAt: Date.now(),
      },
      patch.sourceIds,
    )
    if (!found) return null
    this.#changes.committed('config')
    return this.getDestination(id)
  }

  async deleteDestination(id: string): Promise<boolean> {
    const deleted = await this.#sql.destinations.delete(id)
    if (deleted) this.#changes.committed('config')
    return deleted
  }

  // --- deliveries ---

  async claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    return toClaimedDeliveries(
      destinationId,
      await claimRows(this.#sql, { destinationId, limit, now, leaseMs }),
    )
  }

  async recordOutcomes(
    outcomes: DeliveryOutcome[],
    claims: ClaimRequest[] = [],
  ): Promise<ClaimedDelivery[][]> {
    const claimed = await recordOutcomesClaimingRows(this.#sql, outcomes, claims)
    return claimed.map((rows, i) => toClaimedDeliveries(claims[i]!.destinationId, rows))
  }

  async releaseClaims(deliveryIds: number[]): Promise<void> {
    if (deliveryIds.length > 0) await this.#sql.deliveries.release(deliveryIds)
  }

  async discardDeliveries(deliveryIds: number[]): Promise<void> {
    if (deliveryIds.length > 0) await this.#sql.deliveries.discard(deliveryIds)
  }

  async nextDueAt(destinationId: string, now: number): Promise<number | null> {
    return this.#sql.deliveries.nextDueAt(destinationId, now)
  }

  // --- batches ---

  async batchCandidates(destinationId: string, limit: number, now: number): Promise<BatchCandidate[]> {
    return toBatchCandidates(destinationId, await batchCandidateRows(this.#sql, destinationId, limit, now))
  }

  async formBatches(destinationId: string, groups: number[][], now: number): Promise<number> {
    const nonEmpty = groups.filter((group) => group.length > 0)
    if (nonEmpty.length === 0) return 0
    const formed = await this.#sql.deliveryBatches.form(destinationId, nonEmpty, now, null)
    if (formed.length > 0) this.#changes.committed('deliveries')
    return formed.length
  }

  async formClaimedBatches(
    destinationId: string,
    groups: number[][],
    now: number,
    leaseMs: number,
  ): Promise<FormedBatch[]> {
    const nonEmpty = groups.filter((group) => group.length > 0)
    if (nonEmpty.length === 0) return []
    const formed = await this.#sql.deliveryBatches.form(destinationId, nonEmpty, now, now + leaseMs)
    if (formed.length > 0) this.#changes.committed('deliveries')
    return formed
  }

  async claimBatches(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedBatch[]> {
    return toClaimedBatches(
      destinationId,
      await claimBatchRows(this.#sql, destinationId, limit, now, leaseMs),
    )
  }

  async recordBatchOutcomes(outcomes: BatchOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    const now = Date.now()
    const { rows, attempts } = toBatchOutcomeRows(outcomes, now)
    await this.#sql.deliveryBatches.record(rows, attempts, now)
    this.#changes.committed('deliveries')
  }

  async releaseBatchClaims(batchIds: number[]): Promise<void> {
    if (batchIds.length > 0) await this.#sql.deliveryBatches.release(batchIds)
  }

  async nextBatchDueAt(destinationId: string, now: number): Promise<number | null> {
    return this.#sql.deliveryBatches.nextDueAt(destinationId, now)
  }

  async batchPayloads(batchId: number): Promise<Record<string, unknown>[]> {
    const rows = await this.#sql.deliveryBatches.payloadsOf(batchId)
    return rows.map((row) => JSON.parse(row.payload) as Record<string, unknown>)
  }

  async destinationsWithOpenBatches(): Promise<string[]> {
    return this.#sql.deliveryBatches.openDestinations()
  }

  async listDeliveries(destinationId: string, filter: DeliveryListFilter): Promise<Delivery[]> {
    return this.#withAttempts(await this.#sql.deliveries.list(destinationId, filter))
  }

  async getDelivery(id: number): Promise<Delivery | null> {
    const row = await this.#sql.deliveries.get(id)
    return row ? (await this.#withAttempts([row]))[0]! : null
  }

  async replayDeliveries(filter: ReplayFilter, now: number): Promise<number> {
    const count = await this.#sql.deliveries.replay(filter, now)
    if (count > 0) this.#changes.committed('deliveries')
    return count
  }

  async deadLetterWaiting(destinationId: string, startedBefore: number, now: number): Promise<number> {
    const count = await this.#sql.deliveries.deadLetterWaiting(destinationId, startedBefore, now)
    if (count > 0) this.#changes.committed('deliveries')
    return count
  }

  async countDeliveries(filter: DeliveryCountFilter = {}): Promise<number> {
    return this.#sql.deliveries.count(filter)
  }

  async deliveryStats(destinationId: string): Promise<DeliveryStats> {
    const [gated] = await this.#sql.destinations.gatedCounts(destinationId)
    // A batching destination's requests are its batch attempts (each counted once); one that batched
    // for a while has both kinds, and the sample takes as many of each as there are, up to its size.
    const single = await this.#sql.attempts.recentLatencies(destinationId, LATENCY_SAMPLE)
    const batched = await this.#sql.deliveryBatches.recentLatencies(destinationId, LATENCY_SAMPLE)
    return {
      ...toDeliveryStats(
        await this.#sql.deliveries.countByState(destinationId),
        [...batched, ...single].slice(0, LATENCY_SAMPLE),
      ),
      filtered: Number(gated?.filtered ?? 0),
      sampledOut: Number(gated?.sampled_out ?? 0),
    }
  }

  async gatedCounts(): Promise<DestinationGatedCounts[]> {
    return (await this.#sql.destinations.gatedCounts()).map((row) => ({
      destinationId: row.destination_id,
      filtered: Number(row.filtered),
      sampledOut: Number(row.sampled_out),
    }))
  }

  async deliveryBacklog(): Promise<DestinationBacklog[]> {
    return toBacklogs(await this.#sql.deliveries.backlog())
  }

  async #withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    if (rows.length === 0) return []
    const batchIds = [
      ...new Set(rows.flatMap((row) => (row.batch_id === null ? [] : [Number(row.batch_id)]))),
    ]
    return toDeliveries(
      rows,
      await this.#sql.attempts.ofDeliveries(rows.map((row) => row.id)),
      batchIds.length > 0 ? await this.#sql.deliveryBatches.attemptsOf(batchIds) : [],
    )
  }
}

/**
 * `claimDeliveries` with each message as its stored JSON text, unparsed: what the threaded SQLite
 * store sends across threads (packed; parsed on the other side).
 */
export async function claimRows(
  sql: Pick<StoreSql, 'claimDeliveries'>,
  { destinationId, limit, now, leaseMs }: ClaimRequest,
): Promise<ClaimRow[]> {
  if (limit <= 0) return []
  return sql.claimDeliveries(destinationId, limit, now, now + leaseMs)
}

/** `recordOutcomes` with the claims as `claimRows` returns them. */
export async function recordOutcomesClaimingRows(
  sql: Pick<StoreSql, 'claimDeliveries' | 'recordOutcomes'>,
  outcomes: DeliveryOutcome[],
  claims: ClaimRequest[] = [],
): Promise<ClaimRow[][]> {
  if (outcomes.length === 0) return Promise.all(claims.map((claim) => claimRows(sql, claim)))
  const now = Date.now()
  const specs = claims.map(({ destinationId, limit, now, leaseMs }) => ({
    destinationId,
    limit,
    now,
    leaseUntil: now + leaseMs,
  }))
  const wanted = specs.filter((spec) => spec.limit > 0)
  const claimed = await sql.recordOutcomes(toOutcomeRows(outcomes, now), now, wanted)
  return specs.map((spec) => (spec.limit > 0 ? claimed[wanted.indexOf(spec)]! : []))
}
