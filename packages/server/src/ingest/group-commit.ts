import type { AcceptedMessage, IngestOutcome, MessageStore } from '../domain/message-store.ts'
import { type Metrics, NO_METRICS } from '../observe/metrics.ts'

/** Per submitted message, in order: true when accepted (IngestOutcome.stored), false when dropped as a duplicate. */
export interface SubmitOutcome {
  stored: boolean[]
}

interface PendingRequest {
  messages: AcceptedMessage[]
  resolve: (outcome: SubmitOutcome) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: messages from requests that arrive while commits are being prepared or running are
 * written together in one transaction, so one fsync serves many requests. Each request's promise
 * resolves only after the transaction holding its messages has committed — the Tracking API MUST NOT
 * answer 200 before that.
 *
 * `maxCommitsInFlight` commits may run at once. SQLite has one writer, so 1 there; PostgreSQL commits
 * on separate connections in parallel, and one at a time would leave a process waiting on round trips.
 */
export class GroupCommit {
  private readonly store: MessageStore
  private readonly maxCommitsInFlight: number
  private readonly metrics: Metrics
  private queue: PendingRequest[] = []
  private readonly flushes = new Set<Promise<void>>()
  private scheduled = false

  constructor(
    store: MessageStore,
    options: {
      /** Commits running at once. Default 1. */
      maxCommitsInFlight?: number
      /** Observes each commit's duration and size. Default: none. */
      metrics?: Metrics
    } = {},
  ) {
    this.store = store
    this.maxCommitsInFlight = options.maxCommitsInFlight ?? 1
    this.metrics = options.metrics ?? NO_METRICS
  }

  /** Resolves once the messages are committed (or dropped as duplicates). */
  submit(messages: AcceptedMessage[]): Promise<SubmitOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ messages, resolve, reject })
      this.schedule()
    })
  }

  /** Resolves when everything submitted so far is committed. */
  async drain(): Promise<void> {
    while (this.flushes.size > 0 || this.queue.length > 0 || this.scheduled) {
      await (this.flushes.size > 0
        ? Promise.race(this.flushes)
        : new Promise((resolve) => setImmediate(resolve)))
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushes.size >= this.maxCommitsInFlight) return
    this.scheduled = true
    // setImmediate lets every request already parsed in this event-loop turn join the commit.
    setImmediate(() => {
      this.scheduled = false
      if (this.queue.length === 0) return
      const flushing: Promise<void> = this.flush().finally(() => {
        this.flushes.delete(flushing)
        if (this.queue.length > 0) this.schedule()
      })
      this.flushes.add(flushing)
    })
  }

  private async flush(): Promise<void> {
    const batch = this.queue
    this.queue = []
    const all = batch.length === 1 ? batch[0]!.messages : batch.flatMap((request) => request.messages)
    let outcome: IngestOutcome
    const startedAt = performance.now()
    try {
      // The store announces the deliveries this commit created (Store.watch) before it resolves, so
      // the delivery engine is already on them when the requests are answered.
      outcome = await this.store.ingest(all)
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error)
      // One request's messages may be what the store refused: each request is committed on its own,
      // so the others are stored and only that one fails.
      else for (const request of batch) await this.commitAlone(request)
      return
    }
    this.metrics.committed('ingest', (performance.now() - startedAt) / 1000, all.length)
    let offset = 0
    for (const request of batch) {
      const stored = outcome.stored.slice(offset, offset + request.messages.length)
      offset += request.messages.length
      request.resolve({ stored })
    }
  }

  private async commitAlone(request: PendingRequest): Promise<void> {
    try {
      request.resolve({ stored: (await this.store.ingest(request.messages)).stored })
    } catch (error) {
      request.reject(error)
    }
  }
}
