/**
 * Table rows → contract types, shared by the SQLite and PostgreSQL stores (their tables have the
 * same columns; only booleans differ: SQLite gives 0/1, PostgreSQL true/false).
 */
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStatus,
  Destination,
  DestinationType,
  MessageType,
  Source,
  WebhooksSettings,
} from './store.ts'

type Flag = boolean | number

export interface SourceRow {
  id: string
  name: string
  write_key: string
  enabled: Flag
  created_at: number
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

export function toSource(row: SourceRow): Source {
  return {
    id: row.id,
    name: row.name,
    writeKey: row.write_key,
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
  }
}

export function toDestination(row: DestinationRow, sourceIds: string[]): Destination {
  return {
    id: row.id,
    name: row.name,
    type: row.type as DestinationType,
    enabled: Boolean(row.enabled),
    sourceIds,
    settings: JSON.parse(row.settings) as WebhooksSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export const parseUrls = (text: string | null): string[] => (text ? (JSON.parse(text) as string[]) : [])

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
    const final = row.status === 'delivered' || row.status === 'failed'
    return {
      id: row.id,
      destinationId: row.destination_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      type: row.type as MessageType,
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
