/**
 * Sends operational events to the operator's alert URL (docs/operations.md, "Alerts"), with the
 * delivery engine's guarantees: each event is a row committed before anything is sent (the outbox),
 * leased while it is sent, retried on the retry policy's schedule and window, and signed with
 * Standard Webhooks headers — `webhook-id` (the event id, the same on every retry), `webhook-timestamp`
 * (this attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed
 * with the alert secret's bytes.
 */
import type { AlertResult, ClaimedAlert, HealthStore } from '../domain/health-store.ts'
import type { Logger } from '../lib/logger.ts'
import type { StoreWatch } from '../store/store.ts'
import type { WebhookSender } from './http-sender.ts'
import { classifyAttempt, nextAttempt, type RetrySettings } from './retry-policy.ts'
import { standardWebhooksSignature } from './standard-webhooks.ts'

export interface AlertSenderOptions {
  store: HealthStore & StoreWatch
  sender: WebhookSender
  logger: Logger
  retry: RetrySettings
  /** How long a claim holds; must outlast the request timeout. Default 30 s. */
  leaseMs?: number
  /** Fallback poll. Default 5 s. */
  pollIntervalMs?: number
}

/** Alerts sent at once, at most. */
const ALERTS_PER_ROUND = 10

export class AlertSender {
  readonly #store: HealthStore & StoreWatch
  readonly #sender: WebhookSender
  readonly #logger: Logger
  readonly #retry: RetrySettings
  readonly #leaseMs: number
  readonly #pollIntervalMs: number
  #running = false
  #pumping: Promise<void> | null = null
  #again = false
  #timer: NodeJS.Timeout | undefined
  #unwatch: Promise<(() => Promise<void>) | undefined> | undefined

  constructor(options: AlertSenderOptions) {
    this.#store = options.store
    this.#sender = options.sender
    this.#logger = options.logger
    this.#retry = options.retry
    this.#leaseMs = options.leaseMs ?? 30_000
    this.#pollIntervalMs = options.pollIntervalMs ?? 5_000
  }

  start(): void {
    if (this.#running) return
    this.#running = true
    this.#unwatch = this.#store
      .watch((event) => {
        if (event === 'deliveries') this.#wake()
      })
      .catch(() => undefined)
    this.#wake()
  }

  async stop(): Promise<void> {
    this.#running = false
    clearTimeout(this.#timer)
    await (await this.#unwatch)?.()
    await this.#pumping
  }

  #wake(): void {
    if (!this.#running) return
    if (this.#pumping) {
      this.#again = true
      return
    }
    this.#pumping = this.#pump().finally(() => {
      this.#pumping = null
      if (this.#again) {
        this.#again = false
        this.#wake()
      }
    })
  }

  async #pump(): Promise<void> {
    clearTimeout(this.#timer)
    let wait = this.#pollIntervalMs
    try {
      const settings = await this.#store.getAlertSettings()
      if (settings !== null) {
        for (;;) {
          const claimed = await this.#store.claimAlerts(ALERTS_PER_ROUND, Date.now(), this.#leaseMs)
          const results = await Promise.all(
            claimed.map((alert) => this.#send(alert, settings.url, settings.sharedSecret)),
          )
          for (const result of results) await this.#store.recordAlertResult(result, Date.now())
          if (claimed.length < ALERTS_PER_ROUND || !this.#running) break
        }
        const due = await this.#store.nextAlertDueAt()
        if (due !== null) wait = Math.min(wait, Math.max(5, due - Date.now()))
      }
    } catch (error) {
      this.#logger.warn({ err: error }, 'alerts: sending failed; retrying shortly')
    }
    if (!this.#running) return
    this.#timer = setTimeout(() => this.#wake(), wait)
    this.#timer.unref()
  }

  async #send(alert: ClaimedAlert, url: string, secret: string): Promise<AlertResult> {
    const timestamp = Math.floor(Date.now() / 1000)
    const body = Buffer.from(alert.body, 'utf8')
    const result = await this.#sender.send({
      url,
      body,
      // As signature headers, not static ones: the sender drops static headers of these reserved names.
      signatureHeaders: [
        'webhook-id',
        alert.id,
        'webhook-timestamp',
        String(timestamp),
        'webhook-signature',
        standardWebhooksSignature(secret, alert.id, timestamp, body),
      ],
    })
    const verdict = classifyAttempt(result)
    if (verdict === 'success') return { id: alert.id, outcome: 'delivered' }
    const error = result.errorText ?? `HTTP ${result.statusCode ?? 'error'}`
    if (verdict === 'final') return { id: alert.id, outcome: 'failed', error }
    const decision = nextAttempt(
      {
        firstAttemptAt: alert.createdAt,
        attemptsMade: alert.attemptCount + 1,
        now: Date.now(),
        retryAfterMs: result.retryAfterMs,
      },
      this.#retry,
    )
    if (decision.action === 'dead-letter') {
      this.#logger.warn({ alertId: alert.id, reason: decision.reason }, 'alert could not be delivered')
      return { id: alert.id, outcome: 'failed', error: `${error}; ${decision.reason}` }
    }
    return { id: alert.id, outcome: 'retry', at: decision.at, error }
  }
}
