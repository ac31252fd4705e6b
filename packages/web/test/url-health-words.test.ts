/** A URL's health in words: failures in a row (singular and plural), the last hour's share, each state. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { percentWords, urlHealthWords } from '../src/model/url-health-words.ts'

const health = (change: Partial<Parameters<typeof urlHealthWords>[0]>) => ({
  state: 'healthy' as const,
  consecutiveFailures: 0,
  successRate1h: null,
  lastSuccessAt: null,
  ...change,
})

test('a failing URL says how many failures in a row, then the last hour', () => {
  assert.equal(
    urlHealthWords(health({ state: 'failing', consecutiveFailures: 1, successRate1h: 0 })),
    '1 failure in a row · 0% succeeded in the last hour',
  )
  assert.equal(
    urlHealthWords(health({ state: 'failing', consecutiveFailures: 1234, successRate1h: 0.5 })),
    `${(1234).toLocaleString()} failures in a row · 50% succeeded in the last hour`,
  )
  // Its failures are older than an hour: nothing was sent since.
  assert.equal(
    urlHealthWords(health({ state: 'failing', consecutiveFailures: 2, successRate1h: null })),
    '2 failures in a row · no requests in the last hour',
  )
})

test('a healthy URL says how its last hour went, or that it had no requests', () => {
  assert.equal(urlHealthWords(health({ successRate1h: 1 })), '100% succeeded in the last hour')
  assert.equal(urlHealthWords(health({})), 'No requests yet')
  assert.equal(
    urlHealthWords(health({ lastSuccessAt: '2026-01-01T00:00:00Z' })),
    'No requests in the last hour',
  )
})

test('a disabled URL says it gets nothing until enabled, not a stale share', () => {
  assert.equal(
    urlHealthWords(health({ state: 'disabled', consecutiveFailures: 3, successRate1h: 0 })),
    'Gets no requests until it is enabled.',
  )
})

test('a share never rounds a failure away', () => {
  assert.equal(percentWords(1), '100%')
  assert.equal(percentWords(0.996), '99%')
  assert.equal(percentWords(0.5), '50%')
  assert.equal(percentWords(0.004), 'under 1%')
  assert.equal(percentWords(0), '0%')
})
