// What crosses between the main thread and the SQLite store thread packed comes back exactly as it
// went: nulls, empty strings, non-ASCII and U+0000 text, several claims and empty ones.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { DeliveryOutcome } from '../../src/domain/delivery-store.ts'
import { packClaims, unpackClaims } from '../../src/store/sqlite/packed-claims.ts'
import { packOutcomes, unpackOutcomes } from '../../src/store/sqlite/packed-outcomes.ts'
import type { ClaimRow } from '../../src/store/tables/deliveries.ts'

test('outcomes: every field, null or not, round-trips', () => {
  const outcomes: DeliveryOutcome[] = [
    {
      deliveryId: 9_007_199_254,
      attempts: [
        {
          attemptedAt: 1_780_000_000_123,
          url: 'https://a.example/in',
          statusCode: 204,
          errorKind: null,
          errorText: null,
          latencyMs: 7,
          responseExcerpt: '',
        },
      ],
      status: 'delivered',
      deadLettered: false,
      nextAttemptAt: null,
      firstAttemptAt: 1_780_000_000_000,
      closedUrls: [],
    },
    {
      deliveryId: 2,
      attempts: [
        {
          attemptedAt: 5,
          url: 'https://b.example/é',
          statusCode: null,
          errorKind: 'timeout',
          errorText: 'no answer \u0000 ✓',
          latencyMs: 5000,
          responseExcerpt: null,
        },
        {
          attemptedAt: 6,
          url: '',
          statusCode: 503,
          errorKind: 'http',
          errorText: 'HTTP 503',
          latencyMs: 1,
          responseExcerpt: '{"a":"😀"}',
        },
      ],
      status: 'retrying',
      deadLettered: false,
      nextAttemptAt: 60_000,
      firstAttemptAt: 4,
      closedUrls: ['https://c.example/', 'https://d.example/ü'],
    },
    {
      deliveryId: 3,
      attempts: [],
      status: 'failed',
      deadLettered: true,
      nextAttemptAt: null,
      firstAttemptAt: 0,
      closedUrls: [],
    },
  ]
  assert.deepEqual(unpackOutcomes(packOutcomes(outcomes)), outcomes)
  assert.deepEqual(unpackOutcomes(packOutcomes([])), [])
})

test('claims: several lists, empty ones, nulls and message text exactly as stored', () => {
  const row = (id: number, overrides: Partial<ClaimRow> = {}): ClaimRow => ({
    id,
    received_at: 1_780_000_000_000 + id,
    attempt_count: 0,
    first_attempt_at: null,
    source_id: 'src_1',
    closed_urls: null,
    replay_id: null,
    payload: `{"type":"track","messageId":"m-${id}","unicode":"é✓\\u0000😀"}`,
    ...overrides,
  })
  const claims = [
    [row(1), row(2, { attempt_count: 3, first_attempt_at: 17, closed_urls: '["https://x.example/"]' })],
    [],
    [row(3, { source_id: '', payload: '{}', replay_id: 'rpl_1' })],
  ]
  assert.deepEqual(unpackClaims(packClaims(claims)), claims)
  assert.deepEqual(unpackClaims(packClaims([])), [])
})
