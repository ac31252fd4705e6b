/**
 * The `operational_events` table (notices, and the alert outbox) with `alert_settings`, the one row
 * that says where alerts go.
 */
import type {
  AlertSettings,
  AlertStatus,
  ClaimedAlert,
  OperationalEvent,
  OperationalEventType,
} from '../../domain/health-store.ts'
import type { Awaitable } from './sql-types.ts'

export interface OperationalEventRow {
  id: number
  event_id: string
  type: string
  subject: string
  body: string
  created_at: number
  alert_status: string
  attempt_count: number
  next_attempt_at: number
  lease_until: number | null
  last_error: string | null
}

export type NewOperationalEventRow = Pick<
  OperationalEventRow,
  'event_id' | 'type' | 'subject' | 'body' | 'created_at' | 'alert_status' | 'next_attempt_at'
>

export interface AlertSettingsRow {
  url: string
  shared_secret: string
  events: string | null
  updated_at: number
}

export interface OperationalEventsSql {
  /**
   * Inserts the event unless one of the same type and subject was created after `quietSince`
   * (atomically); true when it was inserted.
   */
  insert(row: NewOperationalEventRow, quietSince: number | null): Awaitable<boolean>
  list(limit: number): Awaitable<OperationalEventRow[]>
  /** The type of the newest event of `subject` among `types`, if any. */
  lastType(subject: string, types: string[]): Awaitable<string | undefined>
  /** Leases due pending rows, oldest first. */
  claim(limit: number, now: number, leaseUntil: number): Awaitable<OperationalEventRow[]>
  /** Sets the alert status, next attempt and error, adds one attempt, and releases the lease. */
  settle(eventId: string, status: AlertStatus, nextAttemptAt: number, error: string | null): Awaitable<void>
  nextDueAt(): Awaitable<number | null>
  getSettings(): Awaitable<AlertSettingsRow | undefined>
  /** Replaces the one row; null deletes it. */
  putSettings(row: AlertSettingsRow | null): Awaitable<void>
  /**
   * Sets the row's URL and secret to `to` only if they still are `from` (a reseal that never undoes a
   * change made meanwhile); true when it did.
   */
  replaceSealedSettings(from: SealedAlertSettings, to: SealedAlertSettings): Awaitable<boolean>
}

/** The alert settings' values kept sealed at rest. */
export type SealedAlertSettings = Pick<AlertSettingsRow, 'url' | 'shared_secret'>

export function toOperationalEvent(row: OperationalEventRow): OperationalEvent {
  const body = JSON.parse(row.body) as { data: Record<string, unknown> }
  return {
    id: row.event_id,
    type: row.type as OperationalEventType,
    subject: row.subject,
    createdAt: row.created_at,
    data: body.data,
    alertStatus: row.alert_status as AlertStatus,
    attemptCount: row.attempt_count,
    lastError: row.last_error,
  }
}

export function toClaimedAlert(row: OperationalEventRow): ClaimedAlert {
  return { id: row.event_id, attemptCount: row.attempt_count, createdAt: row.created_at, body: row.body }
}

export function toAlertSettings(row: AlertSettingsRow): AlertSettings {
  return {
    url: row.url,
    sharedSecret: row.shared_secret,
    events: row.events === null ? null : (JSON.parse(row.events) as OperationalEventType[]),
    updatedAt: row.updated_at,
  }
}
