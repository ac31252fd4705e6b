/**
 * Operational alerts and notices: where Sluice POSTs its operational events (the alert URL, signed
 * with Standard Webhooks), and the recent events the web app shows as notices.
 */

import { newWebhookSecret } from '../lib/ids.ts'
import { fieldLabel } from '../lib/json-pointer.ts'
import { ValidationError } from './errors.ts'
import {
  type AlertSettings,
  type HealthStore,
  OPERATIONAL_EVENT_TYPES,
  type OperationalEvent,
  type OperationalEventType,
} from './health-store.ts'
import { validateUrl } from './webhook-settings.ts'

/** A `whsec_` secret's key must be at least this many bytes (Standard Webhooks). */
export const MIN_WEBHOOK_SECRET_BYTES = 24

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
    if (input.sharedSecret !== undefined && input.sharedSecret !== null)
      sharedSecret = validateWebhookSecret(input.sharedSecret, '/sharedSecret')
    else if (current !== null && input.sharedSecret === undefined) sharedSecret = current.sharedSecret
    else {
      sharedSecret = newWebhookSecret()
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

/** `whsec_` and the base64 of at least 24 bytes. */
export function validateWebhookSecret(value: unknown, field: string): string {
  const example = 'whsec_ followed by at least 24 random bytes in base64'
  if (typeof value !== 'string' || !value.startsWith('whsec_')) {
    throw new ValidationError(field, `${fieldLabel(field)} must be a Standard Webhooks secret: ${example}.`)
  }
  const encoded = value.slice('whsec_'.length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is not valid base64 after "whsec_"; it must be ${example}. Omit it to have Sluice generate one.`,
    )
  }
  const bytes = Buffer.from(encoded, 'base64').length
  if (bytes < MIN_WEBHOOK_SECRET_BYTES) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} holds ${bytes} bytes; at least ${MIN_WEBHOOK_SECRET_BYTES} are required. Omit it to have Sluice generate one.`,
    )
  }
  return value
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
