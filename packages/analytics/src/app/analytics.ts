import { type Batch, readMessageId, whenSettled } from '../lib/batch.ts'
import { createLog, debugEnabled, type Log, readDebugEnv } from '../lib/debug.ts'
import { Dispatcher, type DispatchReport } from '../lib/dispatcher.ts'
import { Emitter } from '../lib/emitter.ts'
import { ClosedError, DeliveryError, ValidationError } from '../lib/errors.ts'
import { FlushTimer } from '../lib/flush-timer.ts'
import { gzipAvailable } from '../lib/gzip.ts'
import {
  aliasMessage,
  groupMessage,
  identifyMessage,
  pageMessage,
  type Serialized,
  screenMessage,
  trackMessage,
} from '../lib/messages.ts'
import { BatchQueue, DROPPED, SEALED, SEALED_BYTES, STARTED } from '../lib/queue.ts'
import { type Rejection, Transport } from '../lib/transport.ts'
import { LIBRARY } from '../version.ts'
import { type AnalyticsOptions, resolveSettings, type Settings } from './settings.ts'
import type {
  AliasParams,
  AnalyticsEvents,
  AnalyticsStats,
  GroupParams,
  IdentifyParams,
  PageParams,
  ScreenParams,
  TrackParams,
} from './types.ts'

const NONE_REFUSED: ReadonlySet<number> = new Set()

export interface CloseOptions {
  /** How long close() waits for queued batches (retries included) before giving up on them, in ms. Default: 10000. */
  timeout?: number
}

/**
 * A Segment-compatible analytics client. Calls validate and queue in memory and return at once;
 * batches go to `POST {endpoint}/v1/batch` when `flushAt` messages are queued or `flushInterval`
 * has passed. Outcomes are events: `delivered`, `failed` (with the reason, server rejections
 * included), `dropped` and `retry`.
 *
 * ```ts
 * const analytics = new Analytics({ writeKey, endpoint: 'http://localhost:8080' })
 * analytics.track({ userId: 'u1', event: 'Order Completed', properties: { total: 12.5 } })
 * await analytics.close()
 * ```
 */
export class Analytics extends Emitter<AnalyticsEvents> {
  /** The options in force, defaults applied. */
  readonly settings: Readonly<Settings>
  private readonly queue: BatchQueue
  private readonly dispatcher: Dispatcher
  private readonly transport: Transport
  private readonly timer: FlushTimer
  private readonly log: Log | undefined
  private closing: Promise<void> | undefined
  private delivered = 0
  private failed = 0
  private dropped = 0

  constructor(options: AnalyticsOptions) {
    super()
    const settings = resolveSettings(options)
    this.log = createLog('analytics', options.debug ?? debugEnabled('analytics', readDebugEnv()))
    if (settings.gzip && !gzipAvailable) {
      this.log?.('gzip requested but CompressionStream is missing here: sending uncompressed')
      settings.gzip = false
    }
    this.settings = settings
    this.queue = new BatchQueue(settings)
    this.transport = new Transport(settings)
    this.dispatcher = new Dispatcher(
      this.queue,
      this.transport,
      settings,
      settings.maxConcurrentRequests,
      this.report(),
    )
    this.timer = new FlushTimer(
      settings.flushInterval,
      () => this.queue.openBatch?.openedAt,
      () => {
        this.sealOpen('interval')
        this.dispatcher.pump()
      },
    )
    this.log?.(
      `${LIBRARY.name} ${LIBRARY.version}: sending to ${settings.url} with ${this.transport.client}, flushAt ${settings.flushAt}, flushInterval ${settings.flushInterval} ms`,
    )
  }

  /** Records who a user is and their traits. Returns the messageId. */
  identify(params: IdentifyParams): string {
    this.assertOpen('identify')
    return this.enqueue(identifyMessage(params))
  }

  /** Records an action a user performed (`event`). Returns the messageId. */
  track(params: TrackParams): string {
    this.assertOpen('track')
    return this.enqueue(trackMessage(params))
  }

  /** Records a page view; `url`, `title`, `referrer`, `path` go into `properties`. Returns the messageId. */
  page(params: PageParams): string {
    this.assertOpen('page')
    return this.enqueue(pageMessage(params))
  }

  /** Records a mobile screen view. Returns the messageId. */
  screen(params: ScreenParams): string {
    this.assertOpen('screen')
    return this.enqueue(screenMessage(params))
  }

  /** Associates a user with a group (company, account…) and its traits. Returns the messageId. */
  group(params: GroupParams): string {
    this.assertOpen('group')
    return this.enqueue(groupMessage(params))
  }

  /** Links a previous identity (`previousId`) to a user (`userId`). Returns the messageId. */
  alias(params: AliasParams): string {
    this.assertOpen('alias')
    return this.enqueue(aliasMessage(params))
  }

  /**
   * Sends what is queued now and resolves when every message queued before the call is delivered
   * or has definitively failed (see the `failed` event). Never rejects. In a serverless function,
   * await it before returning.
   */
  flush(): Promise<void> {
    this.sealOpen('flush()')
    this.dispatcher.pump()
    const pending = this.dispatcher.pending()
    if (pending.length === 0) return Promise.resolve()
    return whenSettled(pending)
  }

  /**
   * Flushes, then stops: later calls throw a ClosedError. Waits at most `timeout` ms for batches
   * still being sent or retried; whatever is left then is failed with `kind: 'closed'`. Never
   * rejects, never hangs; calling it again returns the same promise.
   */
  close(options: CloseOptions = {}): Promise<void> {
    if (this.closing === undefined) {
      const timeout = options.timeout ?? 10_000
      this.log?.(`closing: ${this.queue.held} messages pending, waiting up to ${timeout} ms`)
      this.timer.stop()
      this.closing = this.drain(timeout)
    }
    return this.closing
  }

  /** Message counts since the client was created. */
  get stats(): AnalyticsStats {
    return { pending: this.queue.held, delivered: this.delivered, failed: this.failed, dropped: this.dropped }
  }

  private async drain(timeout: number): Promise<void> {
    const flushed = this.flush()
    let timer: ReturnType<typeof setTimeout> | undefined
    // Not unref'd, unlike the flush timer: a close() in progress should finish, not be cut short.
    const expired = new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, timeout, true)
    })
    const timedOut = await Promise.race([flushed.then(() => false), expired])
    clearTimeout(timer)
    if (timedOut) {
      this.log?.(
        `close: timed out after ${timeout} ms with ${this.queue.held} messages pending; giving up on them`,
      )
      this.dispatcher.abort()
      await flushed
    }
    this.transport.close()
    this.log?.(`closed: ${this.delivered} delivered, ${this.failed} failed, ${this.dropped} dropped`)
  }

  private assertOpen(call: string): void {
    if (this.closing !== undefined) throw new ClosedError(call)
  }

  /** Checks the size (the message was serialized and measured once, by its builder) and queues it. */
  private enqueue(message: Serialized): string {
    const { json, messageId, type, bytes } = message
    const { maxMessageBytes } = this.settings
    if (bytes > maxMessageBytes) {
      throw new ValidationError(
        '.',
        `${type}() message is ${bytes} bytes serialized; the limit is ${maxMessageBytes} (maxMessageBytes).`,
      )
    }
    const flags = this.queue.add(json, bytes)
    if (flags === DROPPED) {
      this.drop(message)
      return messageId
    }
    this.log?.(`queued ${type} ${messageId} (${bytes} bytes, ${this.queue.held} pending)`)
    if (flags & SEALED) {
      this.log?.(
        `flush (${flags & SEALED_BYTES ? 'maxBatchBytes' : 'flushAt'} reached): ${this.queue.readyCount} batches ready`,
      )
      this.dispatcher.schedule()
    }
    if (flags & STARTED) this.timer.arm()
    return messageId
  }

  private drop(message: Serialized): void {
    const total = ++this.dropped
    this.log?.(
      `dropped ${message.type} ${message.messageId}: queue full (${this.queue.held} messages, ${this.queue.heldBytes} bytes); ${total} dropped so far`,
    )
    if (this.listens('dropped')) {
      this.emit('dropped', { messageId: message.messageId, type: message.type, reason: 'queue_full', total })
    }
  }

  private sealOpen(reason: string): void {
    const batch = this.queue.seal()
    if (batch !== undefined) this.log?.(`flush (${reason}): batch #${batch.seq}, ${batch.size} messages`)
  }

  /** Turns dispatcher outcomes into counts, events and log lines. */
  private report(): DispatchReport {
    return {
      sending: (batch: Batch, attempt: number) => {
        this.log?.(
          `sending batch #${batch.seq}: ${batch.size} messages, ${batch.bytes} bytes, attempt ${attempt}`,
        )
      },
      delivered: (batch: Batch, status: number, rejected: readonly Rejection[], attempts: number) => {
        const refused = rejected.length === 0 ? NONE_REFUSED : this.reject(batch, rejected, attempts)
        const accepted = batch.size - refused.size
        this.delivered += accepted
        this.log?.(`batch #${batch.seq}: HTTP ${status}, ${accepted} delivered, ${refused.size} rejected`)
        if (this.listens('delivered')) {
          const ids = batch.messageIds()
          const messageIds = refused.size === 0 ? ids : ids.filter((_, index) => !refused.has(index))
          this.emit('delivered', { messageIds, status, attempts })
        }
      },
      retrying: (batch: Batch, error: DeliveryError, delay: number, attempt: number) => {
        this.log?.(
          `batch #${batch.seq}: ${error.message}; retrying in ${delay} ms (retry ${attempt} of ${this.settings.maxRetries})`,
        )
        if (this.listens('retry')) {
          this.emit('retry', { messageIds: batch.messageIds(), error, attempt, delay })
        }
      },
      failed: (batch: Batch, error: DeliveryError, attempts: number) => {
        this.failed += batch.size
        this.log?.(
          `batch #${batch.seq}: failed after ${attempts} attempts, ${batch.size} messages lost: ${error.message}`,
        )
        if (this.listens('failed')) this.emit('failed', { messageIds: batch.messageIds(), error, attempts })
      },
    }
  }

  /** Reports the messages the server refused in an accepted batch; returns their indexes. */
  private reject(batch: Batch, rejected: readonly Rejection[], attempts: number): ReadonlySet<number> {
    const refused = new Set<number>()
    for (const { index, error } of rejected) {
      const json = batch.message(index)
      if (json === undefined || refused.has(index)) continue
      refused.add(index)
      const messageId = readMessageId(json)
      this.failed++
      this.log?.(`batch #${batch.seq}: message ${messageId} (index ${index}) rejected: ${error}`)
      if (this.listens('failed')) {
        const reason = new DeliveryError('rejected', error, { status: 200 })
        this.emit('failed', { messageIds: [messageId], error: reason, attempts })
      }
    }
    return refused
  }
}
