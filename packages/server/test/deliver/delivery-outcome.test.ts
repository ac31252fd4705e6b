/**
 * The multi-endpoint rule: a delivery's next state from its per-URL results. (engine.test.ts checks
 * the same rules end to end against real receivers.)
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decideOutcome, invalidMessageOutcome } from '../../src/deliver/delivery-outcome.ts'
import type { AttemptResult } from '../../src/deliver/http-sender.ts'
import { retrySettings } from '../../src/deliver/retry-policy.ts'
import type { WebhooksSettings } from '../../src/domain/destinations.ts'

const A = 'https://a.example/hook'
const B = 'https://b.example/hook'
const C = 'https://c.example/hook'
const settings: WebhooksSettings = {
  webhooks: [A, B, C].map((url) => ({ url, headers: {} })),
  sharedSecret: null,
}
/** maxDelayMs = baseDelayMs: the backoff is always exactly 1 s, so due times are exact. */
const retry = retrySettings({
  baseDelayMs: 1000,
  maxDelayMs: 1000,
  windowMs: 60_000,
  retryAfterCapMs: 30_000,
})
const now = 1_800_000_000_000
const fresh = { id: 7, attemptCount: 0, firstAttemptAt: null, closedUrls: [] }

function answered(url: string, statusCode: number, extra: Partial<AttemptResult> = {}): AttemptResult {
  const failed = statusCode < 200 || statusCode > 299
  return {
    url,
    attemptedAt: now - 100,
    statusCode,
    latencyMs: 12.4,
    responseExcerpt: failed ? 'nope' : '',
    ...(failed ? { errorKind: statusCode < 400 && statusCode >= 300 ? 'redirect' : 'http' } : {}),
    ...(failed ? { errorText: `HTTP ${statusCode}` } : {}),
    ...extra,
  }
}

function unanswered(url: string, errorKind: AttemptResult['errorKind']): AttemptResult {
  return { url, attemptedAt: now - 100, errorKind, errorText: 'no', latencyMs: 5000, responseExcerpt: '' }
}

describe('decideOutcome', () => {
  test('any 2xx delivers the message, whatever the other URLs answered', () => {
    const { outcome, deadLetterReason } = decideOutcome(
      fresh,
      settings,
      [answered(A, 500), answered(B, 204), answered(C, 404)],
      now,
      retry,
    )
    assert.equal(outcome.status, 'delivered')
    assert.equal(outcome.nextAttemptAt, null)
    assert.deepEqual(outcome.closedUrls, [])
    assert.equal(deadLetterReason, undefined)
    assert.equal(outcome.firstAttemptAt, now - 100, 'the first attempt started when its requests did')
    assert.deepEqual(outcome.attempts[1], {
      attemptedAt: now - 100,
      url: B,
      statusCode: 204,
      errorKind: null,
      errorText: null,
      latencyMs: 12,
      responseExcerpt: null,
    })
  })

  test('a final answer closes its URL; the open ones are retried together after the backoff', () => {
    const claimed = { ...fresh, attemptCount: 2, firstAttemptAt: now - 5000, closedUrls: [C] }
    const { outcome } = decideOutcome(
      claimed,
      settings,
      [answered(A, 404), unanswered(B, 'timeout')],
      now,
      retry,
    )
    assert.equal(outcome.status, 'retrying')
    assert.equal(outcome.deadLettered, false)
    assert.deepEqual(outcome.closedUrls, [C, A])
    assert.equal(outcome.nextAttemptAt, now + 1000)
    assert.equal(outcome.firstAttemptAt, now - 5000)
    assert.equal(outcome.attempts.length, 2)
  })

  test('every URL closed: failed, and not dead-lettered', () => {
    const { outcome, deadLetterReason } = decideOutcome(
      fresh,
      settings,
      [answered(A, 301, { retryAfterMs: 9000 }), unanswered(B, 'tls'), unanswered(C, 'ssrf')],
      now,
      retry,
    )
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.deadLettered, false)
    assert.deepEqual(outcome.closedUrls, [A, B, C])
    assert.equal(deadLetterReason, undefined)
  })

  test('the longest Retry-After of a retryable answer is honoured; one on a final answer is not', () => {
    const { outcome } = decideOutcome(
      fresh,
      settings,
      [
        answered(A, 429, { retryAfterMs: 5000 }),
        answered(B, 503, { retryAfterMs: 8000 }),
        answered(C, 410, { retryAfterMs: 20_000 }),
      ],
      now,
      retry,
    )
    assert.equal(outcome.status, 'retrying')
    assert.equal(outcome.nextAttemptAt, now + 8000)
  })

  test('a retryable failure at the window end dead-letters, with the reason for the log', () => {
    const claimed = { ...fresh, attemptCount: 11, firstAttemptAt: now - 60_000 }
    const { outcome, deadLetterReason } = decideOutcome(
      claimed,
      settings,
      [answered(A, 500), unanswered(B, 'connect'), unanswered(C, 'dns')],
      now,
      retry,
    )
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.deadLettered, true)
    assert.equal(outcome.nextAttemptAt, null)
    assert.deepEqual(outcome.closedUrls, [])
    assert.equal(deadLetterReason, 'still failing 1 min after the first attempt (12 attempts)')
  })
})

describe('invalidMessageOutcome', () => {
  test('fails the delivery at once with one attempt that says why', () => {
    const outcome = invalidMessageOutcome(
      fresh,
      settings,
      new TypeError('A track message needs a string "event" to be delivered.'),
      now,
    )
    assert.deepEqual(outcome, {
      deliveryId: 7,
      attempts: [
        {
          attemptedAt: now,
          url: A,
          statusCode: null,
          errorKind: 'invalid_message',
          errorText:
            'Sluice could not build the request: A track message needs a string "event" to be delivered.',
          latencyMs: 0,
          responseExcerpt: null,
        },
      ],
      status: 'failed',
      deadLettered: false,
      nextAttemptAt: null,
      firstAttemptAt: now,
      closedUrls: [],
    })
  })
})
