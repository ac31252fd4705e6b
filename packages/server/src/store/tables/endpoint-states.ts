/**
 * The `endpoint_states` table: the shared state of a destination URL, written when it changes. The
 * health figures read `attempts` and `batch_attempts` (bounded, newest first) rather than a counter
 * updated per attempt.
 */
import type { AttemptSummary, EndpointState } from '../../domain/health-store.ts'
import type { Awaitable } from './sql-types.ts'

export interface EndpointStateRow {
  destination_id: string
  url: string
  failing_since: number | null
  disabled_at: number | null
  disabled_reason: string | null
  updated_at: number
}

export interface AttemptSummaryRow {
  url: string
  attempted_at: number
  status_code: number | null
  error_text: string | null
}

export interface EndpointStatesSql {
  list(): Awaitable<EndpointStateRow[]>
  /** Sets failing_since when it is NULL (inserting the row if needed); true when it did. */
  markFailing(destinationId: string, url: string, since: number): Awaitable<boolean>
  /** Clears failing_since; true when it was set. */
  markRecovered(destinationId: string, url: string, now: number): Awaitable<boolean>
  /** Sets disabled_at when it is NULL (inserting the row if needed); true when it did. */
  disable(destinationId: string, url: string, reason: string, now: number): Awaitable<boolean>
  /** Clears disabled_at and failing_since; true when it was disabled. */
  enable(destinationId: string, url: string, now: number): Awaitable<boolean>
  /** The newest `limit` rows of attempts and the newest `limit` of batch_attempts of a destination. */
  recentAttempts(destinationId: string, limit: number): Awaitable<AttemptSummaryRow[]>
}

export function toEndpointState(row: EndpointStateRow): EndpointState {
  return {
    destinationId: row.destination_id,
    url: row.url,
    failingSince: row.failing_since,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
  }
}

/** Newest first (the two tables' rows interleaved by time). */
export function toAttemptSummaries(rows: AttemptSummaryRow[]): AttemptSummary[] {
  return rows
    .map((row) => ({
      url: row.url,
      attemptedAt: row.attempted_at,
      statusCode: row.status_code,
      errorText: row.error_text,
    }))
    .sort((a, b) => b.attemptedAt - a.attemptedAt)
}
