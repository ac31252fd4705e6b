/**
 * The endpoint-health area of the store core (domain/health-store.ts): URL states, the bounded read of
 * recent attempts, operational events and the alert settings.
 */
import type {
  AlertResult,
  AlertSettings,
  AttemptSummary,
  ClaimedAlert,
  EndpointState,
  HealthStore,
  NewOperationalEvent,
  OperationalEvent,
  OperationalEventType,
} from '../../domain/health-store.ts'
import { newId } from '../../lib/ids.ts'
import { toAttemptSummaries, toEndpointState } from '../tables/endpoint-states.ts'
import {
  type OperationalEventRow,
  toAlertSettings,
  toClaimedAlert,
  toOperationalEvent,
} from '../tables/operational-events.ts'
import type { Changes } from './changes.ts'
import type { StoreSql } from './store-sql.ts'
import { StoredSecrets } from './stored-secrets.ts'

type HealthTables = Pick<StoreSql, 'endpointStates' | 'operationalEvents'>

/** What the alert settings' sealed values are bound to (one row). */
const ALERT_SETTINGS_CONTEXT = 'alert_settings'

export class HealthCore implements HealthStore {
  readonly #sql: HealthTables
  readonly #changes: Changes
  readonly #secrets: StoredSecrets

  /** `secrets`: how the alert URL and secret are kept at rest (sealed like destinations' settings, or in clear). */
  constructor(sql: HealthTables, changes: Changes, secrets: StoredSecrets = new StoredSecrets(null)) {
    this.#sql = sql
    this.#changes = changes
    this.#secrets = secrets
  }

  async endpointStates(): Promise<EndpointState[]> {
    return (await this.#sql.endpointStates.list()).map(toEndpointState)
  }

  async markEndpointFailing(destinationId: string, url: string, since: number): Promise<boolean> {
    return this.#sql.endpointStates.markFailing(destinationId, url, since)
  }

  async markEndpointRecovered(destinationId: string, url: string, now: number): Promise<boolean> {
    return this.#sql.endpointStates.markRecovered(destinationId, url, now)
  }

  async disableEndpoint(destinationId: string, url: string, reason: string, now: number): Promise<boolean> {
    const changed = await this.#sql.endpointStates.disable(destinationId, url, reason, now)
    if (changed) this.#changes.committed('config')
    return changed
  }

  async enableEndpoint(destinationId: string, url: string, now: number): Promise<boolean> {
    const changed = await this.#sql.endpointStates.enable(destinationId, url, now)
    if (changed) this.#changes.committed('config')
    return changed
  }

  async recentAttempts(destinationId: string, limit: number): Promise<AttemptSummary[]> {
    return toAttemptSummaries(await this.#sql.endpointStates.recentAttempts(destinationId, limit))
  }

  async recordOperationalEvent(
    event: NewOperationalEvent,
    now: number,
    quietMs?: number,
  ): Promise<OperationalEvent | null> {
    const settings = await this.getAlertSettings()
    const wanted = settings !== null && (settings.events === null || settings.events.includes(event.type))
    const row = {
      event_id: newId('evt'),
      type: event.type,
      subject: event.subject,
      body: JSON.stringify({ type: event.type, timestamp: new Date(now).toISOString(), data: event.data }),
      created_at: now,
      alert_status: wanted ? 'pending' : 'none',
      next_attempt_at: now,
    }
    const inserted = await this.#sql.operationalEvents.insert(
      row,
      quietMs === undefined ? null : now - quietMs,
    )
    if (!inserted) return null
    if (wanted) this.#changes.committed('deliveries')
    const full: OperationalEventRow = { ...row, id: 0, attempt_count: 0, lease_until: null, last_error: null }
    return toOperationalEvent(full)
  }

  async lastOperationalEventType(
    subject: string,
    types: OperationalEventType[],
  ): Promise<OperationalEventType | null> {
    return (
      ((await this.#sql.operationalEvents.lastType(subject, types)) as OperationalEventType | undefined) ??
      null
    )
  }

  async listOperationalEvents(limit: number): Promise<OperationalEvent[]> {
    return (await this.#sql.operationalEvents.list(limit)).map(toOperationalEvent)
  }

  async claimAlerts(limit: number, now: number, leaseMs: number): Promise<ClaimedAlert[]> {
    return (await this.#sql.operationalEvents.claim(limit, now, now + leaseMs)).map(toClaimedAlert)
  }

  async recordAlertResult(result: AlertResult, now: number): Promise<void> {
    if (result.outcome === 'delivered')
      await this.#sql.operationalEvents.settle(result.id, 'delivered', now, null)
    else if (result.outcome === 'retry')
      await this.#sql.operationalEvents.settle(result.id, 'pending', result.at, result.error)
    else await this.#sql.operationalEvents.settle(result.id, 'failed', now, result.error)
  }

  async nextAlertDueAt(): Promise<number | null> {
    return this.#sql.operationalEvents.nextDueAt()
  }

  async getAlertSettings(): Promise<AlertSettings | null> {
    const row = await this.#sql.operationalEvents.getSettings()
    if (!row) return null
    const open = (value: string, what: string) => this.#secrets.open(value, ALERT_SETTINGS_CONTEXT, what)
    return toAlertSettings({
      ...row,
      url: open(row.url, 'the alert URL'),
      shared_secret: open(row.shared_secret, 'the alert secret'),
    })
  }

  /**
   * Seals with the current secret key the alert URL and secret when stored in clear or under an older
   * key, only if unchanged meanwhile; answers how many rows it resealed (0 or 1). Run by `migrate`;
   * throws when they were sealed with a key that is not configured.
   */
  async resealAlertSettings(): Promise<number> {
    const row = await this.#sql.operationalEvents.getSettings()
    if (!row) return 0
    // Opened first, even when current: a value no configured key opens stops the start here.
    const url = this.#secrets.open(row.url, ALERT_SETTINGS_CONTEXT, 'the alert URL')
    const secret = this.#secrets.open(row.shared_secret, ALERT_SETTINGS_CONTEXT, 'the alert secret')
    if (!this.#secrets.stale(row.url) && !this.#secrets.stale(row.shared_secret)) return 0
    const resealed = await this.#sql.operationalEvents.replaceSealedSettings(row, {
      url: this.#secrets.seal(url, ALERT_SETTINGS_CONTEXT),
      shared_secret: this.#secrets.seal(secret, ALERT_SETTINGS_CONTEXT),
    })
    return resealed ? 1 : 0
  }

  async putAlertSettings(settings: Omit<AlertSettings, 'updatedAt'> | null, now: number): Promise<void> {
    await this.#sql.operationalEvents.putSettings(
      settings === null
        ? null
        : {
            url: this.#secrets.seal(settings.url, ALERT_SETTINGS_CONTEXT),
            shared_secret: this.#secrets.seal(settings.sharedSecret, ALERT_SETTINGS_CONTEXT),
            events: settings.events === null ? null : JSON.stringify(settings.events),
            updated_at: now,
          },
    )
  }
}
