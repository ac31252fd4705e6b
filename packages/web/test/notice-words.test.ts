/** What each operational event says as a notice, and how its alert went. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Notice } from '@sluice/server/api'
import { alertWords, noticeWords } from '../src/model/notice-words.ts'

const notice = (type: Notice['type'], data: Notice['data'], alert: Partial<Notice> = {}): Notice => ({
  id: 'evt_1',
  type,
  createdAt: '2026-11-27T03:00:00.000Z',
  data,
  alertStatus: 'none',
  alertAttempts: 0,
  alertError: null,
  ...alert,
})

test('each event type in words', () => {
  assert.equal(
    noticeWords(
      notice('destination.url.failing', {
        url: 'https://a.example/h',
        consecutiveFailures: 20,
        lastError: 'HTTP 503',
      }),
    ),
    'https://a.example/h keeps failing: 20 requests in a row (HTTP 503).',
  )
  assert.equal(
    noticeWords(
      notice('destination.url.disabled', {
        url: 'https://a.example/h',
        reason: 'The URL answered 410 Gone.',
      }),
    ),
    'https://a.example/h was disabled. The URL answered 410 Gone.',
  )
  assert.equal(
    noticeWords(notice('destination.url.recovered', { url: 'https://a.example/h' })),
    'https://a.example/h answers again.',
  )
  assert.equal(
    noticeWords(notice('delivery.dead_lettered', { count: 1 })),
    '1 delivery dead-lettered: its retry window ended. Replay it once the endpoint works.',
  )
  assert.match(
    noticeWords(notice('delivery.dead_lettered', { count: 1200 })),
    /^1,200 deliveries dead-lettered/,
  )
  assert.equal(
    noticeWords(notice('regulation.finished', { regulationId: 'reg_1', status: 'FINISHED' })),
    'Privacy request reg_1 finished.',
  )
  assert.equal(
    noticeWords(notice('regulation.finished', { regulationId: 'reg_2', status: 'PARTIAL_SUCCESS' })),
    'Privacy request reg_2 partly failed: some delete notifications to destinations were dead-lettered.',
  )
})

test('the alert of a notice: none, pending, retrying, sent, failed', () => {
  assert.equal(alertWords(notice('delivery.dead_lettered', {})), null)
  assert.equal(alertWords(notice('delivery.dead_lettered', {}, { alertStatus: 'pending' })), 'Alert pending')
  assert.equal(
    alertWords(
      notice(
        'delivery.dead_lettered',
        {},
        { alertStatus: 'pending', alertAttempts: 2, alertError: 'HTTP 500' },
      ),
    ),
    'Alert not sent yet (HTTP 500)',
  )
  assert.equal(alertWords(notice('delivery.dead_lettered', {}, { alertStatus: 'delivered' })), 'Alert sent')
  assert.equal(
    alertWords(notice('delivery.dead_lettered', {}, { alertStatus: 'failed', alertError: 'HTTP 404' })),
    'Alert failed: HTTP 404',
  )
})
