import type { Batch } from './batch.ts'
import { isoNow } from './clock.ts'
import { closedError, type DeliveryError } from './errors.ts'
import type { BatchQueue } from './queue.ts'
import { backoff } from './retry.ts'
import { sleep } from './timers.ts'
import type { Rejection, Transport } from './transport.ts'

export interface RetryPolicy {
  maxRetries: number
  retryBaseDelay: number
  retryMaxDelay: number
  maxRetryDuration: number
}

/** What the dispatcher tells its owner (who counts, emits events and logs). */
export interface DispatchReport {
  sending(batch: Batch, attempt: number): void
  delivered(batch: Batch, status: number, rejected: readonly Rejection[], attempts: number): void
  retrying(batch: Batch, error: DeliveryError, delay: number, attempt: number): void
  failed(batch: Batch, error: DeliveryError, attempts: number): void
}

/**
 * Sends ready batches, at most `maxConcurrentRequests` at a time. Each batch has exactly one
 * delivery loop, so its attempts are strictly sequential: a batch is never in two requests at once,
 * and a retry sends the same body (same messageIds) for the server to deduplicate.
 */
export class Dispatcher {
  private readonly inFlight = new Set<Batch>()
  private readonly shutdown = new AbortController()
  /** Set by a `Retry-After`: no batch is attempted before this time. */
  private pausedUntil = 0
  private pumpScheduled = false
  private readonly queue: BatchQueue
  private readonly transport: Transport
  private readonly policy: RetryPolicy
  private readonly maxConcurrentRequests: number
  private readonly report: DispatchReport

  constructor(
    queue: BatchQueue,
    transport: Transport,
    policy: RetryPolicy,
    maxConcurrentRequests: number,
    report: DispatchReport,
  ) {
    this.queue = queue
    this.transport = transport
    this.policy = policy
    this.maxConcurrentRequests = maxConcurrentRequests
    this.report = report
  }

  /** Batches being sent or waiting to be. */
  pending(): Batch[] {
    return [...this.inFlight, ...this.queue.readyBatches()]
  }

  /**
   * Starts senders on a microtask, so a call that seals a batch returns without doing I/O work and a
   * burst of calls costs one pump.
   */
  schedule(): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    queueMicrotask(this.runPump)
  }

  /** Starts a sender for each ready batch while fewer than `maxConcurrentRequests` are in flight. */
  pump(): void {
    while (this.inFlight.size < this.maxConcurrentRequests) {
      const batch = this.queue.take()
      if (batch === undefined) return
      this.inFlight.add(batch)
      void this.deliver(batch)
    }
  }

  /** Gives up: aborts requests and retry waits, and fails every batch not yet delivered. */
  abort(): void {
    this.shutdown.abort()
    const error = closedError()
    for (let batch = this.queue.take(); batch !== undefined; batch = this.queue.take()) {
      this.report.failed(batch, error, 0)
      this.finish(batch)
    }
  }

  private readonly runPump = (): void => {
    this.pumpScheduled = false
    this.pump()
  }

  private async deliver(batch: Batch): Promise<void> {
    const signal = this.shutdown.signal
    const { maxRetries, retryBaseDelay, retryMaxDelay, maxRetryDuration } = this.policy
    const started = Date.now()
    let attempt = 0
    let error: DeliveryError | undefined
    try {
      for (;;) {
        const pause = this.pausedUntil - Date.now()
        if (pause > 0) await sleep(pause, signal)
        if (signal.aborted) {
          error = closedError(error)
          break
        }
        attempt++
        this.report.sending(batch, attempt)
        const result = await this.transport.send(batch.body(isoNow()), signal)
        if (result.ok) {
          this.report.delivered(batch, result.status, result.rejected, attempt)
          return
        }
        error = result.error
        if (!error.retryable || attempt > maxRetries) break
        // Retry-After is the server's own estimate: it replaces the backoff and holds every batch.
        const delay = result.retryAfter ?? backoff(attempt, retryBaseDelay, retryMaxDelay)
        if (Date.now() + delay - started > maxRetryDuration) break
        if (result.retryAfter !== undefined) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + delay)
        this.report.retrying(batch, error, delay, attempt)
        await sleep(delay, signal)
      }
      this.report.failed(batch, error, attempt)
    } finally {
      this.inFlight.delete(batch)
      this.finish(batch)
      this.pump()
    }
  }

  private finish(batch: Batch): void {
    this.queue.release(batch)
    batch.settle()
  }
}
