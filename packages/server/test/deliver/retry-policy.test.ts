import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ERROR_KINDS, type ErrorKind } from '../../src/deliver/error-kinds.ts'
import {
  backoffDelayMs,
  classifyAttempt,
  DEFAULT_RETRY_SETTINGS,
  isSuccess,
  nextAttempt,
  parseRetryAfter,
  type RetrySettings,
  retrySettings,
} from '../../src/deliver/retry-policy.ts'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

describe('classifyAttempt', () => {
  const statuses: Array<[number, string]> = [
    [200, 'success'],
    [201, 'success'],
    [204, 'success'],
    [299, 'success'],
    [500, 'retryable'],
    [502, 'retryable'],
    [503, 'retryable'],
    [504, 'retryable'],
    [599, 'retryable'],
    [408, 'retryable'],
    [429, 'retryable'],
    [400, 'final'],
    [401, 'final'],
    [403, 'final'],
    [404, 'final'],
    [410, 'final'],
    [413, 'final'],
    [422, 'final'],
    [301, 'final'],
    [302, 'final'],
    [304, 'final'],
    [307, 'final'],
    [308, 'final'],
    [600, 'final'],
  ]
  for (const [statusCode, verdict] of statuses) {
    test(`HTTP ${statusCode} -> ${verdict}`, () => assert.equal(classifyAttempt({ statusCode }), verdict))
  }

  const errors: Array<[ErrorKind | undefined, string]> = [
    ['timeout', 'retryable'],
    ['connect', 'retryable'],
    ['dns', 'retryable'],
    ['protocol', 'retryable'],
    ['unknown', 'retryable'],
    [undefined, 'retryable'],
    ['tls', 'final'],
    ['ssrf', 'final'],
    ['redirect', 'final'],
    ['invalid_url', 'final'],
    ['invalid_request', 'final'],
    ['invalid_message', 'final'],
  ]
  for (const [errorKind, verdict] of errors) {
    test(`error ${errorKind} -> ${verdict}`, () => assert.equal(classifyAttempt({ errorKind }), verdict))
  }

  test('every error kind has a verdict, and only the listed ones are retried', () => {
    const retried = ERROR_KINDS.filter((errorKind) => classifyAttempt({ errorKind }) === 'retryable')
    assert.deepEqual(retried, ['timeout', 'connect', 'dns', 'protocol', 'unknown'])
  })

  test('isSuccess: a 2xx and nothing else', () => {
    assert.equal(isSuccess({ statusCode: 204 }), true)
    assert.equal(isSuccess({ statusCode: 302, errorKind: 'redirect' }), false)
    assert.equal(isSuccess({ statusCode: 500, errorKind: 'http' }), false)
    assert.equal(isSuccess({ errorKind: 'timeout' }), false)
  })

  test('a status decides over an error kind', () => {
    assert.equal(classifyAttempt({ statusCode: 503, errorKind: 'http' }), 'retryable')
    assert.equal(classifyAttempt({ statusCode: 302, errorKind: 'redirect' }), 'final')
  })
})

describe('backoffDelayMs: exponential, full jitter, floored at the base delay', () => {
  const settings: RetrySettings = { ...DEFAULT_RETRY_SETTINGS, baseDelayMs: 1000, maxDelayMs: 60_000 }

  test('bounds: retry n waits between base and min(max, base * 2^n)', () => {
    for (let n = 1; n <= 12; n++) {
      const ceiling = Math.min(60_000, 1000 * 2 ** n)
      assert.equal(
        backoffDelayMs(n, settings, () => 0),
        1000,
        `retry ${n} low`,
      )
      assert.equal(
        backoffDelayMs(n, settings, () => 0.999_999_999),
        ceiling,
        `retry ${n} high`,
      )
      assert.equal(
        backoffDelayMs(n, settings, () => 0.5),
        Math.round(1000 + (ceiling - 1000) / 2),
      )
    }
  })

  test('jitter spreads many retries across the whole range', () => {
    const samples = Array.from({ length: 2000 }, () => backoffDelayMs(5, settings))
    const min = Math.min(...samples)
    const max = Math.max(...samples)
    const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length
    assert.ok(min >= 1000 && max <= 32_000, `within [1000, 32000]: ${min}..${max}`)
    assert.ok(min < 3000 && max > 30_000, `covers the range: ${min}..${max}`)
    assert.ok(mean > 14_000 && mean < 19_000, `uniform mean ~16500: ${mean}`)
    assert.ok(new Set(samples).size > 1500, 'mostly distinct values')
  })

  test('very late retries stay at the cap (no overflow)', () => {
    assert.equal(
      backoffDelayMs(10_000, settings, () => 0.999_999_999),
      60_000,
    )
    assert.equal(
      backoffDelayMs(0, settings, () => 0.999_999_999),
      2000,
      'retry numbers below 1 count as 1',
    )
  })
})

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-31T12:00:00.000Z')

  test('delta seconds', () => {
    assert.equal(parseRetryAfter('0', now), 0)
    assert.equal(parseRetryAfter('120', now), 120_000)
    assert.equal(parseRetryAfter(' 7 ', now), 7000)
  })

  test('HTTP dates (IMF-fixdate, RFC 850, asctime)', () => {
    assert.equal(parseRetryAfter('Sat, 31 Jan 2026 12:01:30 GMT', now), 90_000)
    assert.equal(parseRetryAfter('Saturday, 31-Jan-26 12:00:10 GMT', now), 10_000)
    assert.equal(parseRetryAfter('Sat Jan 31 12:00:05 2026', now) !== undefined, true)
  })

  test('a date in the past means now', () => {
    assert.equal(parseRetryAfter('Fri, 30 Jan 2026 12:00:00 GMT', now), 0)
  })

  test('unreadable values are ignored', () => {
    for (const value of [undefined, null, '', 'soon', '-5', '1.5', '12abc', 'Blursday, 99 Foo 2026']) {
      assert.equal(parseRetryAfter(value, now), undefined, String(value))
    }
  })
})

describe('nextAttempt: Retry-After, the window and dead-lettering', () => {
  const settings = retrySettings({
    baseDelayMs: 1000,
    maxDelayMs: 60_000,
    retryAfterCapMs: 5 * MINUTE,
    windowMs: HOUR,
  })
  const first = 1_000_000
  const low = () => 0

  test('plain backoff when there is no Retry-After', () => {
    assert.deepEqual(
      nextAttempt({ firstAttemptAt: first, attemptsMade: 1, now: first + 50 }, settings, low),
      {
        action: 'retry',
        at: first + 50 + 1000,
        delayMs: 1000,
      },
    )
  })

  test('Retry-After is honoured as a minimum wait', () => {
    const decision = nextAttempt(
      { firstAttemptAt: first, attemptsMade: 1, now: first, retryAfterMs: 30_000 },
      settings,
      low,
    )
    assert.deepEqual(decision, { action: 'retry', at: first + 30_000, delayMs: 30_000 })
  })

  test('a Retry-After shorter than the backoff does not shorten it', () => {
    const decision = nextAttempt(
      { firstAttemptAt: first, attemptsMade: 6, now: first, retryAfterMs: 0 },
      settings,
      () => 0.5,
    )
    assert.equal(decision.action, 'retry')
    assert.equal(
      decision.action === 'retry' && decision.delayMs,
      backoffDelayMs(6, settings, () => 0.5),
    )
  })

  test('Retry-After is capped', () => {
    const decision = nextAttempt(
      { firstAttemptAt: first, attemptsMade: 1, now: first, retryAfterMs: 24 * HOUR },
      settings,
      low,
    )
    assert.deepEqual(decision, { action: 'retry', at: first + 5 * MINUTE, delayMs: 5 * MINUTE })
  })

  test('a retry past the window end is made at the end instead', () => {
    const now = first + HOUR - 10_000
    const decision = nextAttempt(
      { firstAttemptAt: first, attemptsMade: 20, now, retryAfterMs: 5 * MINUTE },
      settings,
    )
    assert.deepEqual(decision, { action: 'retry', at: first + HOUR, delayMs: 10_000 })
  })

  test('a failure at or after the window end dead-letters', () => {
    for (const now of [first + HOUR, first + HOUR + 1, first + 10 * HOUR]) {
      const decision = nextAttempt({ firstAttemptAt: first, attemptsMade: 30, now }, settings)
      assert.equal(decision.action, 'dead-letter')
      assert.match(
        decision.action === 'dead-letter' ? decision.reason : '',
        /1 h after the first attempt \(30 attempts\)/,
      )
    }
  })

  test('a shrunken window (as tests use) dead-letters after a few attempts', () => {
    const tiny = retrySettings({ baseDelayMs: 10, maxDelayMs: 40, windowMs: 200 })
    let now = 0
    let attempts = 1
    const times = [0]
    for (;;) {
      const decision = nextAttempt({ firstAttemptAt: 0, attemptsMade: attempts, now }, tiny)
      if (decision.action === 'dead-letter') break
      assert.ok(decision.at > now && decision.at <= 200)
      now = decision.at
      times.push(now)
      attempts++
    }
    assert.equal(times.at(-1), 200, 'the last attempt is at the window end')
    assert.ok(attempts >= 5 && attempts <= 21, `${attempts} attempts`)
  })

  test('the default schedule: 5 s request timeout, 4 h window, about two dozen attempts', () => {
    assert.equal(DEFAULT_RETRY_SETTINGS.requestTimeoutMs, 5000)
    assert.equal(DEFAULT_RETRY_SETTINGS.windowMs, 4 * HOUR)
    const attemptCounts: number[] = []
    for (let run = 0; run < 50; run++) {
      let now = 0
      let attempts = 1
      for (;;) {
        const decision = nextAttempt({ firstAttemptAt: 0, attemptsMade: attempts, now: now + 5000 })
        if (decision.action === 'dead-letter') break
        assert.ok(decision.delayMs >= 0 && decision.delayMs <= 30 * MINUTE)
        now = decision.at
        attempts++
      }
      // The last attempt is one whose failure (5 s later here) lands at or past the window's end.
      assert.ok(
        now >= 4 * HOUR - 5000 && now <= 4 * HOUR,
        `the last attempt, at ${now} ms, ends the 4-hour window`,
      )
      attemptCounts.push(attempts)
    }
    const mean = attemptCounts.reduce((a, b) => a + b, 0) / attemptCounts.length
    assert.ok(mean > 15 && mean < 40, `mean attempts ${mean}`)
  })

  test('retrySettings refuses numbers that break the schedule', () => {
    assert.throws(() => retrySettings({ windowMs: -1 }), /windowMs/)
    assert.throws(() => retrySettings({ baseDelayMs: Number.NaN }), /baseDelayMs/)
    assert.throws(() => retrySettings({ baseDelayMs: 10_000, maxDelayMs: 1000 }), /maxDelayMs/)
    assert.deepEqual(retrySettings(), DEFAULT_RETRY_SETTINGS)
  })
})
