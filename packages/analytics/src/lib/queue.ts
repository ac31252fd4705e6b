import { Batch } from './batch.ts'

/** `add` result flags. */
export const DROPPED = 1
/** The message started a new open batch (the flush timer should run). */
export const STARTED = 2
/** A batch reached `flushAt` messages and is ready to send. */
export const SEALED_FULL = 4
/** A batch was sealed because the next message would take it past `maxBatchBytes`. */
export const SEALED_BYTES = 8
/** Either: a batch is ready to send. */
export const SEALED = SEALED_FULL | SEALED_BYTES

export interface QueueLimits {
  flushAt: number
  maxBatchBytes: number
  maxQueueSize: number
  maxQueueBytes: number
}

/**
 * The in-memory queue: one open batch filling up, then sealed batches waiting for a sender. It
 * counts every message held (open, ready or being sent) against the queue limits, so memory stays
 * bounded even while the server is down.
 */
export class BatchQueue {
  /** Messages held: queued or being sent. */
  held = 0
  /** Bytes of the messages held. */
  heldBytes = 0
  private open: Batch | undefined
  // Taken slots are cleared (undefined) so sent batches can be collected before the next compaction.
  private readonly ready: (Batch | undefined)[] = []
  private head = 0
  private nextSeq = 1
  private readonly limits: QueueLimits

  constructor(limits: QueueLimits) {
    this.limits = limits
  }

  /** The batch being filled, if any. */
  get openBatch(): Batch | undefined {
    return this.open
  }

  /** Batches sealed and not yet taken by a sender. */
  get readyCount(): number {
    return this.ready.length - this.head
  }

  /**
   * Queues one serialized message. Seals the open batch first when the message would take it past
   * `maxBatchBytes`, and after when it reaches `flushAt`. Returns flags: DROPPED alone, or STARTED and SEALED_*.
   */
  add(json: string, bytes: number): number {
    const { flushAt, maxBatchBytes, maxQueueSize, maxQueueBytes } = this.limits
    if (this.held >= maxQueueSize || this.heldBytes + bytes > maxQueueBytes) return DROPPED
    let flags = 0
    let open = this.open
    if (open !== undefined && open.bytesWith(bytes) > maxBatchBytes) {
      this.seal()
      open = undefined
      flags |= SEALED_BYTES
    }
    if (open === undefined) {
      open = new Batch(this.nextSeq++)
      this.open = open
      flags |= STARTED
    }
    open.add(json, bytes)
    this.held++
    this.heldBytes += bytes
    if (open.size >= flushAt) {
      this.seal()
      // Sealed at once (flushAt 1): there is no open batch for the timer to watch.
      return (flags | SEALED_FULL) & ~STARTED
    }
    return flags
  }

  /** Moves the open batch to the ready list. Returns it, or undefined when nothing was open. */
  seal(): Batch | undefined {
    const open = this.open
    if (open === undefined) return undefined
    this.open = undefined
    open.seal()
    this.ready.push(open)
    return open
  }

  /** The oldest ready batch, removed from the ready list. */
  take(): Batch | undefined {
    if (this.head === this.ready.length) return undefined
    const batch = this.ready[this.head]
    this.ready[this.head++] = undefined
    // Compact now and then instead of shift(), which is O(n) per call on long backlogs.
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready.splice(0, this.head)
      this.head = 0
    }
    return batch
  }

  /** The ready batches, oldest first. */
  readyBatches(): Batch[] {
    // Only slots before `head` are cleared.
    return this.ready.slice(this.head) as Batch[]
  }

  /** Forgets a batch that was delivered or failed. */
  release(batch: Batch): void {
    this.held -= batch.size
    this.heldBytes -= batch.messageBytes
  }
}
