/**
 * The Tracking API's overload rule: accepted calls wait in memory until their commit, so when the
 * store falls behind (a slow disk, a struggling database) that queue would grow without bound. Past
 * `maxBytes` of serialized calls waiting, new requests are refused with `503` and `Retry-After`
 * before any work is done for them; SDKs retry them later, and what is already queued commits.
 */
import { HttpError } from '../lib/errors.ts'

/** SDKs wait this long before retrying a refused request; the queue drains in milliseconds once the store keeps up. */
export const OVERLOAD_RETRY_AFTER_SECONDS = 1

/** The serialized calls waiting for their commit, against the limit. */
export class IngestQueue {
  /** Serialized bytes of calls accepted and not yet committed. */
  bytes = 0
  /** Calls accepted and not yet committed. */
  messages = 0
  private readonly maxBytes: number

  /** @param maxBytes `SLUICE_INGEST_QUEUE_BYTES` (default 32 MiB): past it, requests are refused. */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes
  }

  /** True once the queue holds `maxBytes` or more: a request arriving now is refused. */
  get full(): boolean {
    return this.bytes >= this.maxBytes
  }

  enter(bytes: number, messages: number): void {
    this.bytes += bytes
    this.messages += messages
  }

  leave(bytes: number, messages: number): void {
    this.bytes -= bytes
    this.messages -= messages
  }
}

export function overloadedError(): HttpError {
  const error = new HttpError(
    503,
    'overloaded',
    `Sluice is accepting calls faster than its store commits them, so this request was refused and nothing in it was stored. Retry it after ${OVERLOAD_RETRY_AFTER_SECONDS} second(s); SDKs do so on their own.`,
  )
  error.retryAfterSeconds = OVERLOAD_RETRY_AFTER_SECONDS
  return error
}
