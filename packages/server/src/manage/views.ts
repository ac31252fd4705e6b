/**
 * How stored resources look through the management API: ISO 8601 times, and destination settings
 * without the shared secret (only whether one is set).
 */
import type { AttemptResult } from '../deliver/http-sender.ts'
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStats,
  DeliveryStatus,
  Destination,
  MessageType,
  Source,
  SourceStats,
} from '../store/store.ts'

export interface SourceView {
  id: string
  name: string
  writeKey: string
  enabled: boolean
  createdAt: string
  stats: SourceStats
}

export interface DestinationView {
  id: string
  name: string
  type: Destination['type']
  enabled: boolean
  sourceIds: string[]
  settings: {
    webhooks: Array<{ url: string; headers: Record<string, string> }>
    sharedSecretSet: boolean
  }
  createdAt: string
  updatedAt: string
  stats: DeliveryStats
}

export function sourceView(source: Source, stats: SourceStats): SourceView {
  return {
    id: source.id,
    name: source.name,
    writeKey: source.writeKey,
    enabled: source.enabled,
    createdAt: new Date(source.createdAt).toISOString(),
    stats: { accepted: stats.accepted, duplicates: stats.duplicates, rejected: stats.rejected },
  }
}

export function destinationView(destination: Destination, stats: DeliveryStats): DestinationView {
  return {
    id: destination.id,
    name: destination.name,
    type: destination.type,
    enabled: destination.enabled,
    sourceIds: [...destination.sourceIds],
    settings: {
      webhooks: destination.settings.webhooks.map(({ url, headers }) => ({ url, headers: { ...headers } })),
      sharedSecretSet: destination.settings.sharedSecret !== null,
    },
    createdAt: new Date(destination.createdAt).toISOString(),
    updatedAt: new Date(destination.updatedAt).toISOString(),
    stats: statsView(stats),
  }
}

export function statsView(stats: DeliveryStats): DeliveryStats {
  return {
    pending: stats.pending,
    retrying: stats.retrying,
    delivered: stats.delivered,
    failed: stats.failed,
    deadLettered: stats.deadLettered,
    latencyP50Ms: stats.latencyP50Ms,
    latencyP95Ms: stats.latencyP95Ms,
  }
}

/** What one request to one URL brought, as the API shows it (a test send, or part of an attempt). */
export interface AttemptResultView {
  url: string
  statusCode: number | null
  errorKind: string | null
  errorText: string | null
  latencyMs: number
  responseExcerpt: string | null
}

export interface AttemptView extends AttemptResultView {
  attemptedAt: string
}

export interface DeliveryView {
  id: number
  destinationId: string
  sourceId: string
  messageId: string
  type: MessageType
  status: DeliveryStatus
  deadLettered: boolean
  attemptCount: number
  nextAttemptAt: string | null
  firstAttemptAt: string | null
  createdAt: string
  updatedAt: string
  attempts: AttemptView[]
}

export function deliveryView(delivery: Delivery): DeliveryView {
  return {
    id: delivery.id,
    destinationId: delivery.destinationId,
    sourceId: delivery.sourceId,
    messageId: delivery.messageId,
    type: delivery.type,
    status: delivery.status,
    deadLettered: delivery.deadLettered,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: isoOrNull(delivery.nextAttemptAt),
    firstAttemptAt: isoOrNull(delivery.firstAttemptAt),
    createdAt: iso(delivery.createdAt),
    updatedAt: iso(delivery.updatedAt),
    attempts: delivery.attempts.map(attemptView),
  }
}

function attemptView(attempt: DeliveryAttempt): AttemptView {
  return {
    attemptedAt: iso(attempt.attemptedAt),
    url: attempt.url,
    statusCode: attempt.statusCode,
    errorKind: attempt.errorKind,
    errorText: attempt.errorText,
    latencyMs: attempt.latencyMs,
    responseExcerpt: attempt.responseExcerpt,
  }
}

/** A test send's result: the same members as a recorded attempt, absent ones as null. */
export function attemptResultView(result: AttemptResult): AttemptResultView {
  return {
    url: result.url,
    statusCode: result.statusCode ?? null,
    errorKind: result.errorKind ?? null,
    errorText: result.errorText ?? null,
    latencyMs: Math.round(result.latencyMs),
    responseExcerpt: result.responseExcerpt === '' ? null : result.responseExcerpt,
  }
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString()
}

function isoOrNull(epochMs: number | null): string | null {
  return epochMs === null ? null : iso(epochMs)
}
