/**
 * The engine's bookkeeping against an in-memory store and an instant fake sender: group commits, the
 * bound on unrecorded successes, stop(), and the dead-letter log. (engine.test.ts covers real
 * receivers end to end.)
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { DeliveryEngine } from '../../src/deliver/engine.ts'
import type { AttemptResult, SendRequest, WebhookSender } from '../../src/deliver/http-sender.ts'
import { type RetrySettings, retrySettings } from '../../src/deliver/retry-policy.ts'
import type { ClaimedDelivery, ClaimRequest, DeliveryOutcome } from '../../src/domain/delivery-store.ts'
import type { Destination } from '../../src/domain/destinations.ts'
import type { Logger } from '../../src/lib/logger.ts'
import type { Store } from '../../src/store/store.ts'
import { eventually, sleep } from './receivers.ts'

const CONCURRENCY = 8

interface Harness {
  engine: DeliveryEngine
  /** Sizes of the recordOutcomes calls, in order. */
  commits: number[]
  committed: () => number
  /** Most requests sent whose outcome was not yet committed, at any moment. */
  maxUnrecorded: () => number
}

/**
 * `total` deliveries; the fake sender answers `answer.statusCode` (200) after `sendMs`; each commit
 * takes `commitMs`.
 */
function harness(
  total: number,
  sendMs: number,
  commitMs: number,
  answer: { statusCode?: number; logger?: Logger; retry?: RetrySettings } = {},
): Harness {
  const destination = {
    id: 'dst_1',
    name: 'hooks',
    type: 'webhooks',
    enabled: true,
    sourceIds: ['src_1'],
    settings: { webhooks: [{ url: 'https://hooks.example/in', headers: {} }], sharedSecret: 'secret' },
  } as unknown as Destination
  let claimed = 0
  let sent = 0
  let committed = 0
  let maxUnrecorded = 0
  const commits: number[] = []
  const claimDeliveries = async (_id: string, limit: number) => {
    const batch: ClaimedDelivery[] = []
    for (; batch.length < limit && claimed < total; claimed++) {
      batch.push({
        id: claimed,
        destinationId: destination.id,
        sourceId: 'src_1',
        receivedAt: 0,
        attemptCount: 0,
        firstAttemptAt: null,
        replayId: null,
        closedUrls: [],
        payload: {
          type: 'track',
          userId: 'u',
          event: 'E',
          messageId: `m-${claimed}`,
          timestamp: '2026-01-31T12:00:00.000Z',
        },
      })
    }
    return batch
  }
  const store = {
    kind: 'sqlite',
    listDestinations: async () => [destination],
    claimDeliveries,
    recordOutcomes: async (outcomes: DeliveryOutcome[], claims: ClaimRequest[] = []) => {
      await sleep(commitMs)
      commits.push(outcomes.length)
      committed += outcomes.length
      return Promise.all(claims.map((claim) => claimDeliveries(claim.destinationId, claim.limit)))
    },
    releaseClaims: async () => {},
    nextDueAt: async () => null,
    // No destination here batches.
    destinationsWithOpenBatches: async () => [],
    releaseBatchClaims: async () => {},
    // Endpoint health: no URL disabled; streaks and events are accepted and forgotten.
    endpointStates: async () => [],
    markEndpointFailing: async () => true,
    markEndpointRecovered: async () => true,
    recentAttempts: async () => [],
    recordOperationalEvent: async () => null,
    // Announces nothing: the engine finds this work by its own wake-up at start.
    watch: async () => async () => {},
  } as unknown as Store
  const sender = {
    send: async (request: SendRequest): Promise<AttemptResult> => {
      sent++
      maxUnrecorded = Math.max(maxUnrecorded, sent - committed)
      const attemptedAt = Date.now()
      await sleep(sendMs)
      const statusCode = answer.statusCode ?? 200
      return {
        url: request.url,
        attemptedAt,
        statusCode,
        latencyMs: sendMs,
        responseExcerpt: 'ok',
        ...(statusCode === 200 ? {} : { errorKind: 'http', errorText: `HTTP ${statusCode}` }),
      }
    },
  } as unknown as WebhookSender
  const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger
  const engine = new DeliveryEngine({
    store,
    logger: answer.logger ?? silent,
    sender,
    retry: answer.retry ?? retrySettings(),
    concurrencyPerDestination: CONCURRENCY,
  })
  return { engine, commits, committed: () => committed, maxUnrecorded: () => maxUnrecorded }
}

describe('engine: group commits', () => {
  test('under load, outcomes share commits, and in flight + unrecorded stays within 2 × concurrency', async () => {
    const run = harness(400, 1, 15)
    run.engine.start()
    assert.ok(await eventually(() => run.committed() === 400, 10_000), `${run.committed()} committed`)
    await run.engine.stop()
    assert.ok(run.maxUnrecorded() <= 2 * CONCURRENCY, `${run.maxUnrecorded()} unrecorded at once`)
    // Slow commits: the outcomes that settle during one go together into the next.
    const average = 400 / run.commits.length
    assert.ok(average >= CONCURRENCY / 2, `${run.commits.length} commits for 400 outcomes`)
  })

  test('a single outcome after a quiet spell is committed within a few milliseconds', async () => {
    const run = harness(1, 0, 0)
    const started = Date.now()
    run.engine.start()
    assert.ok(await eventually(() => run.committed() === 1, 2_000))
    assert.ok(Date.now() - started < 500, `committed after ${Date.now() - started} ms`)
    await run.engine.stop()
    assert.deepEqual(run.commits, [1])
  })

  test('stop() waits for requests in flight and commits their outcomes', async () => {
    const run = harness(CONCURRENCY, 100, 5)
    run.engine.start()
    await sleep(30) // every request is in flight now
    await run.engine.stop()
    assert.equal(run.committed(), CONCURRENCY)
  })
})

describe('engine: dead-lettering', () => {
  test('a delivery dead-lettered is logged at warn with its id, destination and the reason', async () => {
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = []
    const logger = {
      error() {},
      info() {},
      debug() {},
      warn(fields: Record<string, unknown>, message: string) {
        warnings.push({ fields, message })
      },
    } as unknown as Logger
    // A zero-length window: the first retryable failure is already past it.
    const run = harness(1, 0, 0, { statusCode: 503, logger, retry: retrySettings({ windowMs: 0 }) })
    run.engine.start()
    assert.ok(await eventually(() => run.committed() === 1, 2_000))
    await run.engine.stop()
    assert.deepEqual(warnings, [
      {
        fields: {
          deliveryId: 0,
          destinationId: 'dst_1',
          reason: 'still failing 0 ms after the first attempt (1 attempt)',
        },
        message: 'delivery dead-lettered',
      },
    ])
  })
})
