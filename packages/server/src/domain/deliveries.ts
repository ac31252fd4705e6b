/**
 * Deliveries: one record per (message, destination), with every attempt made for it.
 *
 * State machine:
 *   pending  -> not attempted yet
 *   retrying -> at least one retryable failure; next attempt at `nextAttemptAt`
 *   delivered (final) -> some URL answered 2xx
 *   failed (final)    -> a non-retryable answer on every URL, or the retry window ran out
 *                        (`deadLettered` = true); can be replayed
 */
import { ConflictError, NotFoundError } from './errors.ts'
import type { StoredMessageType } from './messages.ts'

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Delivered and failed deliveries are final: nothing is sent again unless they are replayed. */
export function isFinal(status: DeliveryStatus): boolean {
  return status === 'delivered' || status === 'failed'
}

/** The final statuses, the ones a replay starts again; `failed` includes dead-lettered deliveries. */
export type ReplayableStatus = Extract<DeliveryStatus, 'failed' | 'delivered'>
export const REPLAYABLE_STATUSES: readonly ReplayableStatus[] = ['failed', 'delivered']

/** How many deliveries one page of a listing holds. */
export const DELIVERY_PAGE_SIZE = { default: 50, max: 500 } as const

/** One HTTP request made for a delivery, to one URL. */
export interface DeliveryAttempt {
  attemptedAt: number
  url: string
  /** Present when the endpoint answered. */
  statusCode: number | null
  /** Why there was no 2xx (timeout, connect, tls, ssrf, http, redirect, ...); null on success. */
  errorKind: string | null
  errorText: string | null
  latencyMs: number
  /** At most 1 KB of the response body. */
  responseExcerpt: string | null
}

export interface Delivery {
  id: number
  destinationId: string
  sourceId: string
  messageId: string
  type: StoredMessageType
  /** The message's `userId`, for finding a user's deliveries; null when it has none. */
  userId: string | null
  /** The message's `anonymousId` (most of a website's calls have only this); null when it has none. */
  anonymousId: string | null
  /** The track call's `event`, or the page or screen call's `name`; null for other calls. */
  event: string | null
  status: DeliveryStatus
  /** True when it failed because the retry window ran out. */
  deadLettered: boolean
  attemptCount: number
  /**
   * The batch the message is sent in (its destination batches); its status and attempts are the
   * batch's. Null when sent alone or not yet in a batch.
   */
  batchId: number | null
  /** The replay that created it (its requests carry `X-Sluice-Replay`); null for a live delivery. */
  replayId: string | null
  /** When the next attempt is due; null once final. */
  nextAttemptAt: number | null
  firstAttemptAt: number | null
  /** URLs that gave a final non-2xx answer: later attempts skip them. */
  closedUrls: string[]
  createdAt: number
  updatedAt: number
  /** Oldest first. */
  attempts: DeliveryAttempt[]
}

export interface DeliveryStats {
  pending: number
  retrying: number
  delivered: number
  /** All failed deliveries, dead-lettered ones included. */
  failed: number
  deadLettered: number
  /** Over the destination's last `LATENCY_SAMPLE` attempts; null when there are none. */
  latencyP50Ms: number | null
  latencyP95Ms: number | null
  /** Calls its subscription or a `drop` filter kept from it (no delivery was created). */
  filtered: number
  /** Calls a `sample` filter left out (no delivery was created). */
  sampledOut: number
}

/** Latency percentiles are taken over this many of a destination's most recent attempts. */
export const LATENCY_SAMPLE = 1_000

/** The counters of a destination that has no deliveries yet. */
export const NO_DELIVERIES_YET: Readonly<DeliveryStats> = Object.freeze({
  pending: 0,
  retrying: 0,
  delivered: 0,
  failed: 0,
  deadLettered: 0,
  latencyP50Ms: null,
  latencyP95Ms: null,
  filtered: 0,
  sampledOut: 0,
})

export function deliveryNotFound(id: number): NotFoundError {
  return new NotFoundError(
    'delivery_not_found',
    `No delivery has id ${id}. List a destination's deliveries with GET /api/v1/destinations/{id}/deliveries.`,
  )
}

/** Refuses to replay a delivery that is not final: it is already due to go out. */
export function deliveryAlreadyScheduled(delivery: Delivery): ConflictError {
  const next =
    delivery.nextAttemptAt === null
      ? ''
      : `, next attempt at ${new Date(delivery.nextAttemptAt).toISOString()}`
  return new ConflictError(
    'already_scheduled',
    `Delivery ${delivery.id} is ${delivery.status}${next}: it is already scheduled to go out, so there is ` +
      'nothing to replay. Only delivered or failed deliveries can be replayed; follow this one with ' +
      `GET /api/v1/deliveries/${delivery.id}.`,
  )
}
