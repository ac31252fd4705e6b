/**
 * What can be done with the deliveries of accepted messages, for every caller: list and read them
 * with their attempts, replay final ones, and read a destination's counters.
 */

import {
  DELIVERY_PAGE_SIZE,
  type Delivery,
  type DeliveryStats,
  type DeliveryStatus,
  deliveryAlreadyScheduled,
  deliveryNotFound,
  isFinal,
  type ReplayableStatus,
} from './deliveries.ts'
import type { DeliveryStore } from './delivery-store.ts'
import { ValidationError } from './errors.ts'
import { requireDelivery, requireDestination } from './lookups.ts'
import type { StoredMessageType } from './messages.ts'
import { checkSeriesRange, type SeriesPoint, toSeries } from './series.ts'
import type { SeriesStore } from './series-store.ts'

export interface DeliveryListOptions {
  /** Only deliveries in this state. Default: all. */
  status?: DeliveryStatus
  /** Deliveries per page, 1 to `DELIVERY_PAGE_SIZE.max`. Default `DELIVERY_PAGE_SIZE.default`. */
  limit?: number
  /** Only deliveries older than this id: the previous page's `nextCursor`. Default: from the newest. */
  before?: number
  /** Only deliveries of messages of this type. Default: all. */
  type?: StoredMessageType
  /** Only deliveries of messages with this `userId`. Default: all. */
  userId?: string
  /** Only deliveries created at or after this epoch-ms time. Default: all. */
  since?: number
  /** Only deliveries created before this epoch-ms time. Default: all. */
  until?: number
}

export interface DeliveryPage {
  /** Newest first, each with its attempts. */
  deliveries: Delivery[]
  /** The `before` of the next page; null on the last page. */
  nextCursor: number | null
}

export interface DestinationReplayOptions {
  /** Which final deliveries to replay; `failed` includes dead-lettered ones. Default `failed`. */
  status?: ReplayableStatus
  /** Only deliveries created (their message accepted) at or after this epoch-ms time. Default: all. */
  since?: number
}

export class DeliveryService {
  private readonly store: DeliveryStore & SeriesStore

  constructor(store: DeliveryStore & SeriesStore) {
    this.store = store
  }

  /** A page of a destination's deliveries, newest first. */
  async list(destinationId: string, options: DeliveryListOptions = {}): Promise<DeliveryPage> {
    const { limit = DELIVERY_PAGE_SIZE.default, ...filters } = options
    if (!Number.isInteger(limit) || limit < 1 || limit > DELIVERY_PAGE_SIZE.max) {
      throw new ValidationError(
        '/limit',
        `limit must be a whole number from 1 to ${DELIVERY_PAGE_SIZE.max}; got ${limit}. Page through more with before.`,
      )
    }
    await requireDestination(this.store, destinationId)
    // One more than asked tells whether another page exists, so the last page says so.
    const defined = Object.entries(filters).filter(([, value]) => value !== undefined)
    const page = await this.store.listDeliveries(destinationId, {
      limit: limit + 1,
      ...(Object.fromEntries(defined) as Omit<DeliveryListOptions, 'limit'>),
    })
    const deliveries = page.slice(0, limit)
    const last = deliveries.at(-1)
    return { deliveries, nextCursor: page.length > limit && last !== undefined ? last.id : null }
  }

  async get(id: number): Promise<Delivery> {
    return requireDelivery(this.store, id)
  }

  /**
   * Schedules one final (delivered or failed) delivery to go out again at once, with a fresh retry
   * window, and returns it as scheduled. A pending or retrying one is refused: it is already due.
   */
  async replay(id: number): Promise<Delivery> {
    const delivery = await requireDelivery(this.store, id)
    if (!isFinal(delivery.status)) throw deliveryAlreadyScheduled(delivery)
    const replayed = await this.store.replayDeliveries({ ids: [delivery.id] }, Date.now())
    // The store has told the delivery engine; it claims on its next turn, so this still reads the
    // delivery as scheduled.
    const current = await this.store.getDelivery(delivery.id)
    if (current === null) throw deliveryNotFound(delivery.id) // deleted meanwhile
    if (replayed === 0) throw deliveryAlreadyScheduled(current) // replayed by someone else meanwhile
    return current
  }

  /**
   * Schedules a destination's final deliveries with the given status to go out again at once, with a
   * fresh retry window; pending and retrying ones are left alone, and each call goes at most once (the
   * store's `replayDeliveries`). Returns how many were scheduled.
   */
  async replayDestination(destinationId: string, options: DestinationReplayOptions = {}): Promise<number> {
    const { status = 'failed', since } = options
    await requireDestination(this.store, destinationId)
    const replayed = await this.store.replayDeliveries(
      { destinationId, status, ...(since === undefined ? {} : { since }) },
      Date.now(),
    )
    return replayed
  }

  /**
   * A destination's attempts (succeeded, failed) and latency percentiles per `step` ms over
   * `[from, to)`, from the store's per-minute figures. Steps start at `from` taken down to the minute.
   */
  async series(destinationId: string, from: number, to: number, step: number): Promise<SeriesPoint[]> {
    checkSeriesRange(from, to, step)
    from = Math.floor(from / 60_000) * 60_000
    await requireDestination(this.store, destinationId)
    return toSeries(await this.store.deliveryMinutes(destinationId, from, to), from, to, step)
  }

  /** A destination's counters per state and its request latency. */
  async stats(destinationId: string): Promise<DeliveryStats> {
    await requireDestination(this.store, destinationId)
    return this.store.deliveryStats(destinationId)
  }
}
