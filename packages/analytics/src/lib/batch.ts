/** Bytes of the request body around the messages: `{"batch":[…],"sentAt":"<24-character ISO time>"}`. */
export const ENVELOPE_BYTES = '{"batch":[],"sentAt":"2026-01-31T12:00:00.000Z"}'.length

interface Waiter {
  remaining: number
  resolve: () => void
}

/**
 * The messageId of the serialized message starting at `from` in `json`. Every message starts with
 * `type` then `messageId` (see MessageWriter in json.ts), so it is the first `"messageId":"` after
 * that; reading it back costs less than keeping a second string per queued message.
 */
export function readMessageId(json: string, from = 0): string {
  const start = json.indexOf('"messageId":"', from) + 13
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
 * Messages sent together in one request, kept as the JSON text serialized at the call: a retry
 * sends the very same messages (same messageIds).
 *
 * While the batch is open its messages are kept as written (ropes of a dozen pieces each); `seal`
 * joins them into one flat string, the batch's `text`, and lets the pieces go. So what stays queued
 * is one string per batch rather than per message: young, short-lived garbage for the collector
 * instead of thousands of small strings it must copy, and less memory per queued message.
 */
export class Batch {
  /** Sequence number, for logs. */
  readonly seq: number
  /** When the first message was queued (the flush interval counts from here). */
  readonly openedAt: number
  /** Exact size of the request body, envelope included. */
  bytes = ENVELOPE_BYTES
  /** Sum of the messages' sizes (what the queue's byte limit counts). */
  messageBytes = 0
  /** The messages while the batch is open; undefined once sealed. */
  private parts: string[] | undefined = []
  /** Sealed: the messages joined with commas. */
  private text = ''
  /** Where each message ends in the joined text (UTF-16 offsets); the next starts one comma later. */
  private readonly ends: number[] = []
  private waiters: Waiter[] | undefined
  private done = false

  constructor(seq: number) {
    this.seq = seq
    this.openedAt = Date.now()
  }

  get size(): number {
    return this.ends.length
  }

  /** Body size if a message of `bytes` were added (the comma included). */
  bytesWith(bytes: number): number {
    return this.bytes + bytes + (this.ends.length > 0 ? 1 : 0)
  }

  /** Adds a message of `bytes` UTF-8 bytes; only while open (before `seal`). */
  add(json: string, bytes: number): void {
    const count = this.ends.length
    this.bytes = this.bytesWith(bytes)
    this.messageBytes += bytes
    this.ends.push((count === 0 ? 0 : this.ends[count - 1]! + 1) + json.length)
    this.parts!.push(json)
  }

  /** Joins the messages into one string; no message can be added after. */
  seal(): void {
    if (this.parts === undefined) return
    this.text = this.parts.join(',')
    this.parts = undefined
  }

  /** The messages joined with commas, as they go in the body. */
  private joined(): string {
    return this.parts === undefined ? this.text : this.parts.join(',')
  }

  /** The message at `index` in the batch, or undefined past the end. */
  message(index: number): string | undefined {
    if (!(index >= 0 && index < this.ends.length)) return undefined
    if (this.parts !== undefined) return this.parts[index]
    return this.text.slice(index === 0 ? 0 : this.ends[index - 1]! + 1, this.ends[index])
  }

  /** The messageIds, in batch order (computed: only events and logs need them). */
  messageIds(): string[] {
    const text = this.joined()
    const ids: string[] = []
    for (let index = 0; index < this.ends.length; index++) {
      ids.push(readMessageId(text, index === 0 ? 0 : this.ends[index - 1]! + 1))
    }
    return ids
  }

  /** The request body; `sentAt` is set per attempt so the server's clock correction stays right. */
  body(sentAt: string): string {
    return `{"batch":[${this.joined()}],"sentAt":"${sentAt}"}`
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
