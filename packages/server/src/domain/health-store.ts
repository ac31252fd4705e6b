/**
 * What endpoint health and operational alerts ask of storage: the shared state of each destination
 * URL (failing since, disabled), the recent attempts its figures are read from, and the operational
 * events that are both the web app's notices and the alert outbox. One area of the store contract
 * (store/store.ts); the store implements it in store/core/health.ts.
 */

/** What every process must agree on about one URL of a destination. Absent: healthy and enabled. */
export interface EndpointState {
  destinationId: string
  url: string
  /** The first failure after its last success; null while it succeeds. */
  failingSince: number | null
  /** When it was disabled; null while enabled. */
  disabledAt: number | null
  disabledReason: string | null
}

/** One request's result, as endpoint health reads it (from single and batch attempts alike). */
export interface AttemptSummary {
  url: string
  attemptedAt: number
  statusCode: number | null
  errorText: string | null
}

export const OPERATIONAL_EVENT_TYPES = [
  'destination.url.failing',
  'destination.url.disabled',
  'destination.url.recovered',
  'delivery.dead_lettered',
  'regulation.finished',
] as const
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number]

/** Where an operational event stands as an alert. `none`: no alert URL wanted it when it happened. */
export type AlertStatus = 'none' | 'pending' | 'delivered' | 'failed'

export interface NewOperationalEvent {
  type: OperationalEventType
  /** What rate limits count by: a destination URL, a destination, a regulation. */
  subject: string
  /** The event's `data`. */
  data: Record<string, unknown>
}

export interface OperationalEvent {
  /** `evt_…`: the alert's `webhook-id`, the same on every retry. */
  id: string
  type: OperationalEventType
  subject: string
  createdAt: number
  data: Record<string, unknown>
  alertStatus: AlertStatus
  attemptCount: number
  lastError: string | null
}

/** An event leased to be POSTed to the alert URL. */
export interface ClaimedAlert {
  id: string
  attemptCount: number
  createdAt: number
  /** The exact body to send: `{"type", "timestamp", "data"}`. */
  body: string
}

export type AlertResult =
  | { id: string; outcome: 'delivered' }
  | { id: string; outcome: 'retry'; at: number; error: string }
  | { id: string; outcome: 'failed'; error: string }

export interface AlertSettings {
  url: string
  /** `whsec_…`: signs every alert (Standard Webhooks). */
  sharedSecret: string
  /** The event types sent; null: every type. */
  events: OperationalEventType[] | null
  updatedAt: number
}

export interface HealthStore {
  /** Every URL with a recorded state (the others are healthy and enabled). */
  endpointStates(): Promise<EndpointState[]>
  /** Starts a URL's failing streak at `since`, unless one is already running. True when it started one. */
  markEndpointFailing(destinationId: string, url: string, since: number): Promise<boolean>
  /** Ends a URL's failing streak. True when one was running. */
  markEndpointRecovered(destinationId: string, url: string, now: number): Promise<boolean>
  /** Disables a URL (no request goes to it). True when it was enabled. Announces `config`. */
  disableEndpoint(destinationId: string, url: string, reason: string, now: number): Promise<boolean>
  /** Enables a URL again, with a fresh failing streak. True when it was disabled. Announces `config`. */
  enableEndpoint(destinationId: string, url: string, now: number): Promise<boolean>
  /**
   * A destination's most recent request results, newest first: at most `limit` of its single
   * attempts and `limit` of its batch attempts, each read from the newest back (a bounded read).
   */
  recentAttempts(destinationId: string, limit: number): Promise<AttemptSummary[]>

  /**
   * Records an event, unless one of the same type and subject was recorded less than `quietMs` ago
   * (then null; decided atomically, whichever process asks). It becomes a pending alert when an alert
   * URL is set and wants its type. Announces `deliveries` when it does.
   */
  recordOperationalEvent(
    event: NewOperationalEvent,
    now: number,
    quietMs?: number,
  ): Promise<OperationalEvent | null>
  /** The most recent events, newest first. */
  listOperationalEvents(limit: number): Promise<OperationalEvent[]>
  /** Which of `types` the newest event about `subject` has; null when there is none of them. */
  lastOperationalEventType(
    subject: string,
    types: OperationalEventType[],
  ): Promise<OperationalEventType | null>
  /** Leases up to `limit` due pending alerts until `now + leaseMs`, oldest first. */
  claimAlerts(limit: number, now: number, leaseMs: number): Promise<ClaimedAlert[]>
  /** Records what sending an alert came to, releasing its lease. */
  recordAlertResult(result: AlertResult, now: number): Promise<void>
  /** When the earliest unleased pending alert is due, or null. */
  nextAlertDueAt(): Promise<number | null>
  getAlertSettings(): Promise<AlertSettings | null>
  /** Replaces the alert settings (null removes them). */
  putAlertSettings(settings: Omit<AlertSettings, 'updatedAt'> | null, now: number): Promise<void>
  /**
   * Seals the alert URL and secret with the current secret key when stored in clear or under the
   * previous key (a rotation), only if unchanged meanwhile; answers how many rows (0 or 1). Throws
   * when they were sealed with a key that is not configured.
   */
  resealAlertSettings(): Promise<number>
}
