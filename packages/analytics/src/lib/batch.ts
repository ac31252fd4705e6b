/** Bytes of the request body around the messages: `{"batch":[…],"sentAt":"<24-character ISO time>"}`. */
export const ENVELOPE_BYTES = '{"batch":[],"sentAt":"2026-01-31T12:00:00.000Z"}'.length

interface Waiter {
  remaining: number
  resolve: () => void
}

/**
 * The messageId of a serialized message. Every message starts with `type` then `messageId` (see
 * messageStart in json.ts), so it is the first `"messageId":"` in the text; reading it back costs
 * less than keeping a second string per queued message.
 */
export function readMessageId(json: string): string {
  const start = json.indexOf('"messageId":"') + 13
  let end = start
  let escaped = false
  for (let code = json.charCodeAt(end); code !== 0x22 && end < json.length; code = json.charCodeAt(end)) {
    if (code === 0x5c) {
      escaped = true
      end++
    }
    end++
  }
  const raw = json.slice(start, end)
  return escaped ? (JSON.parse(`"${raw}"`) as string) : raw
}

/**
 * Messages sent together in one request, kept as the JSON strings serialized at the call: the body
 * is built by joining them, and a retry sends the very same messages (same messageIds).
 */
export class Batch {
  /** Sequence number, for logs. */
  readonly seq: number
  /** When the first message was queued (the flush interval counts from here). */
  readonly openedAt: number
  readonly messages: string[] = []
  /** Exact size of the request body, envelope included. */
  bytes = ENVELOPE_BYTES
  /** Sum of the messages' sizes (what the queue's byte limit counts). */
  messageBytes = 0
  private waiters: Waiter[] | undefined
  private done = false

  constructor(seq: number) {
    this.seq = seq
    this.openedAt = Date.now()
  }

  get size(): number {
    return this.messages.length
  }

  /** Body size if a message of `bytes` were added (the comma included). */
  bytesWith(bytes: number): number {
    return this.bytes + bytes + (this.messages.length > 0 ? 1 : 0)
  }

  add(json: string, bytes: number): void {
    this.bytes = this.bytesWith(bytes)
    this.messageBytes += bytes
    this.messages.push(json)
  }

  /** The messageIds, in batch order (computed: only events and logs need them). */
  messageIds(): string[] {
    return this.messages.map(readMessageId)
  }

  /** The request body; `sentAt` is set per attempt so the server's clock correction stays right. */
  body(sentAt: string): string {
    return `{"batch":[${this.messages.join(',')}],"sentAt":"${sentAt}"}`
  }

  /** Counts this batch towards a flush() waiting on several batches. */
  notify(waiter: Waiter): void {
    if (this.done) return
    waiter.remaining++
    if (this.waiters) this.waiters.push(waiter)
    else this.waiters = [waiter]
  }

  /** Marks the batch delivered or definitively failed, and wakes the flushes waiting on it. */
  settle(): void {
    this.done = true
    if (!this.waiters) return
    for (const waiter of this.waiters) {
      if (--waiter.remaining === 0) waiter.resolve()
    }
    this.waiters = undefined
  }
}

/** Resolves once every batch in `batches` has settled (at once when all have). */
export function whenSettled(batches: Iterable<Batch>): Promise<void> {
  return new Promise((resolve) => {
    // Starts at 1 so batches settling while we register cannot resolve early.
    const waiter: Waiter = { remaining: 1, resolve }
    for (const batch of batches) batch.notify(waiter)
    if (--waiter.remaining === 0) resolve()
  })
}
