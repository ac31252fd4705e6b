/** The `attempts` table: one row per request sent for a delivery. */
import type { DeliveryAttempt } from '../../domain/deliveries.ts'
import type { Awaitable } from './sql-types.ts'

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

export interface AttemptsSql {
  /** Attempts of these deliveries (at least one), oldest first. */
  ofDeliveries(deliveryIds: number[]): Awaitable<AttemptRow[]>
  /** Latencies of the destination's `limit` most recent attempts, any order. */
  recentLatencies(destinationId: string, limit: number): Awaitable<number[]>
}

export function toAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    attemptedAt: row.attempted_at,
    url: row.url,
    statusCode: row.status_code,
    errorKind: row.error_kind,
    errorText: row.error_text,
    latencyMs: row.latency_ms,
    responseExcerpt: row.response_excerpt,
  }
}
