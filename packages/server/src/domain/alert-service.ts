/**
 * Operational alerts and notices: where Sluice POSTs its operational events (the alert URL, signed
 * with Standard Webhooks), and the recent events the web app shows as notices.
 */

import { newStandardWebhooksSecret } from '../lib/standard-webhooks-secret.ts'
import { ValidationError } from './errors.ts'
import {
  type AlertSettings,
  type HealthStore,
  OPERATIONAL_EVENT_TYPES,
  type OperationalEvent,
  type OperationalEventType,
} from './health-store.ts'
import { validateStandardWebhooksSecret, validateUrl } from './webhook-settings.ts'

export interface AlertSettingsInput {
  url?: unknown
  sharedSecret?: unknown
  events?: unknown
}

export interface SavedAlertSettings {
  settings: AlertSettings
  /** The secret Sluice generated, shown once; null when the caller gave it or it was kept. */
  generatedSecret: string | null
}

export class AlertService {
  readonly #store: HealthStore

  constructor(store: HealthStore) {
    this.#store = store
  }

  get(): Promise<AlertSettings | null> {
    return this.#store.getAlertSettings()
  }

  /**
   * Sets where alerts go. Without `sharedSecret` the current secret is kept, or a new one generated;
   * without `events` every type is sent.
   */
  async put(input: AlertSettingsInput): Promise<SavedAlertSettings> {
    const url = validateUrl(input.url, '/url')
    const current = await this.#store.getAlertSettings()
    let generatedSecret: string | null = null
    let sharedSecret: string
    // The same rules and words as a destination's Standard Webhooks secret; null: Sluice makes one.
    const given =
      input.sharedSecret === undefined
        ? undefined
        : validateStandardWebhooksSecret(input.sharedSecret, '/sharedSecret')
    if (given !== undefined) sharedSecret = given
    else if (current !== null && input.sharedSecret === undefined) sharedSecret = current.sharedSecret
    else {
      sharedSecret = newStandardWebhooksSecret()
      generatedSecret = sharedSecret
    }
    const events = input.events === undefined || input.events === null ? null : validateEvents(input.events)
    const now = Date.now()
    await this.#store.putAlertSettings({ url, sharedSecret, events }, now)
    return { settings: { url, sharedSecret, events, updatedAt: now }, generatedSecret }
  }

  async remove(): Promise<void> {
    await this.#store.putAlertSettings(null, Date.now())
  }

  /** The most recent operational events, newest first. */
  notices(limit: number): Promise<OperationalEvent[]> {
    return this.#store.listOperationalEvents(limit)
  }
}

function validateEvents(value: unknown): OperationalEventType[] {
  const allowed = OPERATIONAL_EVENT_TYPES.join(', ')
  if (!Array.isArray(value)) {
    throw new ValidationError('/events', `events must be a list of event types from: ${allowed}.`)
  }
  for (const [i, type] of value.entries()) {
    if (!(OPERATIONAL_EVENT_TYPES as readonly unknown[]).includes(type)) {
      throw new ValidationError(
        `/events/${i}`,
        `events[${i}] is ${JSON.stringify(type)}; it must be one of: ${allowed}.`,
      )
    }
  }
  return [...new Set(value as OperationalEventType[])]
}
