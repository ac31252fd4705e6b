/**
 * Table rows ⇄ contract records, for both backends: their tables have the same columns (only booleans
 * differ: SQLite gives 0/1, PostgreSQL true/false), so each mapping is written once, here, and the SQL
 * modules of each backend only move rows.
 */
import { type Delivery, type DeliveryAttempt, type DeliveryStatus, isFinal } from '../../domain/deliveries.ts'
import type { Destination, DestinationType, WebhooksSettings } from '../../domain/destinations.ts'
import type { StoredMessageType } from '../../domain/messages.ts'
import type { Source } from '../../domain/sources.ts'
import type { AccessToken, TokenRole } from '../../domain/tokens.ts'
import type { ClaimedDelivery, DeliveryOutcome, StoredMessage } from '../store.ts'

type Flag = boolean | number

export interface SourceRow {
  id: string
  name: string
  write_key: string
  enabled: Flag
  created_at: number
}

export interface TokenRow {
  id: string
  name: string
  role: string
  token_hash: string
  created_at: number
  last_used_at: number | null
}

export interface DestinationRow {
  id: string
  name: string
  type: string
  enabled: Flag
  settings: string
  created_at: number
  updated_at: number
}

/** One source connected to one destination (destination_sources). */
export interface ConnectionRow {
  destination_id: string
  source_id: string
}

export interface MessageRow {
  pk: number
  source_id: string
  message_id: string
  type: string
  received_at: number
  payload: string
}

/** A delivery joined with its message's source_id, message_id and type. */
export interface DeliveryRow {
  id: number
  destination_id: string
  status: string
  dead_lettered: Flag
  attempt_count: number
  next_attempt_at: number
  first_attempt_at: number | null
  closed_urls: string | null
  created_at: number
  updated_at: number
  source_id: string
  message_id: string
  type: string
}

export interface AttemptRow {
  delivery_id: number
  attempted_at: number
  url: string
  status_code: number | null
  error_kind: string | null
  error_text: string | null
  latency_ms: number
  response_excerpt: string | null
}

/** A delivery just leased, with its message's payload, source and receive time. */
export interface ClaimRow {
  id: number
  source_id: string
  received_at: number
  attempt_count: number
  first_attempt_at: number | null
  closed_urls: string | null
  payload: string
}

/** How many deliveries of a destination are in one state. */
export interface StateCountRow {
  status: DeliveryStatus
  dead_lettered: Flag
  n: number
}

/** Waiting deliveries of one destination in one state (pending or retrying). */
export interface BacklogRow {
  destination_id: string
  status: 'pending' | 'retrying'
  n: number
  oldest_due_at: number
}

/** A delivery's new state after an attempt, as its columns take it. */
export interface OutcomeRow {
  id: number
  status: DeliveryOutcome['status']
  deadLettered: boolean
  /** A final delivery keeps a due time: it is never claimed again (only pending/retrying rows are). */
  nextAttemptAt: number
  /** Kept when the delivery already has one (COALESCE in both backends' SQL). */
  firstAttemptAt: number
  /** JSON array, or null when no URL is closed. */
  closedUrls: string | null
}

export interface OutcomeRows {
  deliveries: OutcomeRow[]
  /** Every attempt of every outcome, in order. */
  attempts: { deliveryId: number; attempt: DeliveryAttempt }[]
}

export function toSource(row: SourceRow): Source {
  return {
    id: row.id,
    name: row.name,
    writeKey: row.write_key,
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
  }
}

/** Destinations with their connected source ids (in the order the connection rows come). */
export function toDestinations(rows: DestinationRow[], connections: ConnectionRow[]): Destination[] {
  const sourceIds = new Map<string, string[]>()
  for (const connection of connections) {
    const list = sourceIds.get(connection.destination_id)
    if (list) list.push(connection.source_id)
    else sourceIds.set(connection.destination_id, [connection.source_id])
  }
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    type: row.type as DestinationType,
    enabled: Boolean(row.enabled),
    sourceIds: sourceIds.get(row.id) ?? [],
    settings: JSON.parse(row.settings) as WebhooksSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }))
}

/** The `settings` column: the settings as JSON text. */
export const settingsText = (settings: WebhooksSettings): string => JSON.stringify(settings)

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    pk: row.pk,
    sourceId: row.source_id,
    messageId: row.message_id,
    type: row.type as StoredMessageType,
    receivedAt: row.received_at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  }
}

const parseUrls = (text: string | null): string[] => (text ? (JSON.parse(text) as string[]) : [])

/** Claimed deliveries in id order (the order they were created in). */
export function toClaimedDeliveries(destinationId: string, rows: ClaimRow[]): ClaimedDelivery[] {
  return rows
    .sort((a, b) => a.id - b.id)
    .map((row) => ({
      id: row.id,
      destinationId,
      sourceId: row.source_id,
      receivedAt: Number(row.received_at),
      attemptCount: row.attempt_count,
      firstAttemptAt: row.first_attempt_at,
      closedUrls: parseUrls(row.closed_urls),
      payload: JSON.parse(row.payload) as Record<string, unknown>,
    }))
}

export function toOutcomeRows(outcomes: DeliveryOutcome[], now: number): OutcomeRows {
  const deliveries: OutcomeRow[] = new Array(outcomes.length)
  const attempts: OutcomeRows['attempts'] = []
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!
    for (const attempt of outcome.attempts) attempts.push({ deliveryId: outcome.deliveryId, attempt })
    deliveries[i] = {
      id: outcome.deliveryId,
      status: outcome.status,
      deadLettered: outcome.deadLettered,
      nextAttemptAt: outcome.nextAttemptAt ?? now,
      firstAttemptAt: outcome.firstAttemptAt,
      closedUrls: outcome.closedUrls.length > 0 ? JSON.stringify(outcome.closedUrls) : null,
    }
  }
  return { deliveries, attempts }
}

/** Deliveries with their attempts (oldest first), from a delivery query and an attempts query. */
export function toDeliveries(rows: DeliveryRow[], attemptRows: AttemptRow[]): Delivery[] {
  const byDelivery = new Map<number, DeliveryAttempt[]>()
  for (const attempt of attemptRows) {
    const list = byDelivery.get(attempt.delivery_id) ?? []
    list.push({
      attemptedAt: attempt.attempted_at,
      url: attempt.url,
      statusCode: attempt.status_code,
      errorKind: attempt.error_kind,
      errorText: attempt.error_text,
      latencyMs: attempt.latency_ms,
      responseExcerpt: attempt.response_excerpt,
    })
    byDelivery.set(attempt.delivery_id, list)
  }
  return rows.map((row) => {
    const final = isFinal(row.status as DeliveryStatus)
    return {
      id: row.id,
      destinationId: row.destination_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      type: row.type as StoredMessageType,
      status: row.status as DeliveryStatus,
      deadLettered: Boolean(row.dead_lettered),
      attemptCount: row.attempt_count,
      nextAttemptAt: final ? null : row.next_attempt_at,
      firstAttemptAt: row.first_attempt_at,
      closedUrls: parseUrls(row.closed_urls),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      attempts: byDelivery.get(row.id) ?? [],
    }
  })
}

export function toAccessToken(row: TokenRow): AccessToken {
  return {
    id: row.id,
    name: row.name,
    role: row.role as TokenRole,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  }
}
