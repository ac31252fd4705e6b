/** The back-pressure policy (deliver/back-pressure.ts) on its own: AIMD, Retry-After, the rate cap. */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { RateLimit, RETRY_AFTER_CAP_MS, UrlPressure } from '../../src/deliver/back-pressure.ts'
import type { AttemptResult } from '../../src/deliver/http-sender.ts'
import { DEFAULT_RETRY_SETTINGS, nextAttempt } from '../../src/deliver/retry-policy.ts'

const result = (statusCode: number, attemptedAt: number, retryAfterMs?: number): AttemptResult => ({
  url: 'https://example.com/hook',
  attemptedAt,
  statusCode,
  latencyMs: 10,
  responseExcerpt: '',
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
})

describe('UrlPressure', () => {
  test('a 429 or 503 halves the concurrency once per round, never below 1', () => {
    const pressure = new UrlPressure(32)
    pressure.observe(result(429, 0), 100)
    assert.equal(pressure.limit, 16)
    // Requests in flight when it was halved (started before) do not halve it again.
    pressure.observe(result(429, 50), 110)
    assert.equal(pressure.limit, 16)
    pressure.observe(result(503, 105), 120)
    assert.equal(pressure.limit, 8)
    for (let t = 200; t < 300; t += 10) pressure.observe(result(429, t), t + 1)
    assert.equal(pressure.limit, 1)
  })

  test('successes add one request in flight per full round, up to the maximum', () => {
    const pressure = new UrlPressure(4)
    pressure.observe(result(429, 0), 1)
    pressure.observe(result(429, 2), 3)
    assert.equal(pressure.limit, 1)
    pressure.observe(result(200, 4), 5)
    assert.equal(Math.floor(pressure.limit), 2)
    pressure.observe(result(200, 6), 7)
    pressure.observe(result(200, 8), 9)
    assert.equal(Math.floor(pressure.limit), 3)
    for (let t = 10; t < 100; t++) pressure.observe(result(204, t), t)
    assert.equal(pressure.limit, 4)
  })

  test('Retry-After pauses the URL as asked, capped at 10 minutes; other failures do not pause', () => {
    const pressure = new UrlPressure(8)
    pressure.observe(result(500, 0, 60_000), 0)
    assert.equal(pressure.pausedUntil, 0)
    pressure.observe(result(429, 0, 2_000), 1_000)
    assert.equal(pressure.pausedUntil, 3_000)
    assert.equal(pressure.canSend(2_999), false)
    assert.equal(pressure.canSend(3_000), true)
    pressure.observe(result(503, 4_000, 3_600_000), 5_000)
    assert.equal(pressure.pausedUntil, 5_000 + RETRY_AFTER_CAP_MS)
    assert.equal(RETRY_AFTER_CAP_MS, 600_000)
  })

  test('the retry policy caps Retry-After at 10 minutes by default too', () => {
    const decision = nextAttempt(
      { firstAttemptAt: 0, attemptsMade: 1, now: 0, retryAfterMs: 3_600_000 },
      DEFAULT_RETRY_SETTINGS,
      () => 0,
    )
    assert.equal(decision.action === 'retry' && decision.delayMs, 600_000)
  })
})

describe('RateLimit', () => {
  test('lets through perSecond requests a second, in 100 ms bursts', () => {
    const limit = new RateLimit(50, 0)
    let sent = 0
    for (let now = 0; now < 1_000; now++) if (limit.take(1, now)) sent++
    assert.ok(sent >= 50 && sent <= 56, `${sent} requests in a second`)
    assert.equal(limit.take(1, 1_000), true)
  })

  test('says when the next request may go', () => {
    const limit = new RateLimit(2, 0)
    assert.equal(limit.take(1, 0), true)
    assert.equal(limit.take(1, 0), false)
    assert.equal(limit.nextAt(0), 500)
  })
})
