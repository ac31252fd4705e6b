/** Bytes of the request body around the messages: `{"batch":[…],"sentAt":"<24-character ISO time>"}`. */
export const ENVELOPE_BYTES = '{"batch":[],"sentAt":"2026-01-31T12:00:00.000Z"}'.length

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const BODY_HEAD = encoder.encode('{"batch":[')

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
 * encodes them, comma-separated, into one byte array of the exact size (the sizes were counted as they
 * were written) and lets the strings go. So what stays queued is one byte array per batch, outside
 * the JavaScript heap: the collector never copies queued messages (a burst of calls faster than the
 * sending used to spend ~30% of its time copying the queued text from young to old space), and the
 * body goes on the wire as those bytes.
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
  /** Sealed: the messages as UTF-8, comma-separated. */
  private data: Uint8Array<ArrayBuffer> = new Uint8Array(0)
  /** Where each message ends in `data` (UTF-8 offsets); the next starts one comma later. */
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
    this.ends.push((count === 0 ? 0 : this.ends[count - 1]! + 1) + bytes)
    this.parts!.push(json)
  }

  /** Encodes the messages into the batch's bytes; no message can be added after. */
  seal(): void {
    if (this.parts === undefined) return
    this.data = encodeJoined(this.parts, this.bytes - ENVELOPE_BYTES)
    this.parts = undefined
  }

  /** The messages as UTF-8, comma-separated, as they go in the body. */
  private joined(): Uint8Array<ArrayBuffer> {
    return this.parts === undefined ? this.data : encodeJoined(this.parts, this.bytes - ENVELOPE_BYTES)
  }

  /** The message at `index` in the batch, or undefined past the end. */
  message(index: number): string | undefined {
    if (!(index >= 0 && index < this.ends.length)) return undefined
    if (this.parts !== undefined) return this.parts[index]
    return decoder.decode(this.data.subarray(index === 0 ? 0 : this.ends[index - 1]! + 1, this.ends[index]))
  }

  /** The messageIds, in batch order (computed: only events and logs need them). */
  messageIds(): string[] {
    const ids: string[] = []
    for (let index = 0; index < this.ends.length; index++) ids.push(readMessageId(this.message(index)!))
    return ids
  }

  /**
   * The request body, exactly `bytes` long; `sentAt` is set per attempt so the server's clock
   * correction stays right.
   */
  body(sentAt: string): Uint8Array<ArrayBuffer> {
    const messages = this.joined()
    const body = new Uint8Array(this.bytes)
    body.set(BODY_HEAD)
    body.set(messages, BODY_HEAD.length)
    encoder.encodeInto(`],"sentAt":"${sentAt}"}`, body.subarray(BODY_HEAD.length + messages.length))
    return body
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

/**
 * Sealed batches take their bytes from shared 256 KB slabs, as Node's Buffer pool does: a separate
 * array per batch is a separate backing store for V8 to allocate, account for and sweep, which cost
 * more than the encoding itself. A slab is freed when the last batch using it is.
 */
const SLAB_BYTES = 256 * 1024
let slab = new Uint8Array(0)
let slabUsed = 0

function allocate(bytes: number): Uint8Array<ArrayBuffer> {
  if (bytes > SLAB_BYTES / 8) return new Uint8Array(bytes)
  if (slabUsed + bytes > slab.length) {
    slab = new Uint8Array(SLAB_BYTES)
    slabUsed = 0
  }
  const view = slab.subarray(slabUsed, slabUsed + bytes)
  slabUsed += bytes
  return view
}

/**
 * `parts` as UTF-8 joined with commas, in exactly `bytes` (their sizes were counted as written). One
 * join (it flattens the messages' ropes once) and one encoding call.
 */
function encodeJoined(parts: readonly string[], bytes: number): Uint8Array<ArrayBuffer> {
  const data = allocate(bytes)
  encoder.encodeInto(parts.join(','), data)
  return data
}
