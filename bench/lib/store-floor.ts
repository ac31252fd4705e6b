// The store's floor: the CPU that durably storing a call, and durably recording a delivery, cost on
// SQLite by themselves — no HTTP, no JSON parsing, no validation, no thread hop, no profiles — in this
// process, on the store's own thread. What Sluice spends per call or per delivery can never go below
// these, so the ingest and delivery scenarios set them against their CPU budgets.
//   node bench/lib/store-floor.ts ingest|delivery [--quick]
// Prints JSON on stdout, for the part named:
// - ingest: `SqliteStore.ingest` of the ingest scenario's calls in 300-call commits (about what a group
//   commit carries under that load), synchronous=FULL, no destination (as in that scenario);
// - delivery: what the delivery engine asks of the store per commit under load — record 24 outcomes
//   (each a delivered state and one attempt row) and claim the next 24 in the same fsynced
//   transaction (`Store.recordOutcomes` with a claim) — from a backlog of one destination.
// Each figure is the median over rounds of this thread's CPU (user + system) per call or delivery;
// the wall time, which adds the fsync wait, is reported beside it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AcceptedMessage, ClaimedDelivery, DeliveryOutcome } from '@sluice/server'
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts'

const quick = process.argv.includes('--quick')
const rounds = quick ? 3 : 9
const ingestPerRound = quick ? 3_000 : 30_000
const ingestCommit = 300
const deliveriesPerRound = quick ? 2_400 : 24_000
const outcomeCommit = 24

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const round1 = (value: number) => Math.round(value * 10) / 10

/** This thread's CPU and the wall clock, in µs per item, over `work`. */
async function timed(items: number, work: () => Promise<void>): Promise<{ cpuUs: number; wallUs: number }> {
  const cpuBefore = process.threadCpuUsage()
  const started = performance.now()
  await work()
  const cpu = process.threadCpuUsage(cpuBefore)
  return {
    cpuUs: (cpu.user + cpu.system) / items,
    wallUs: ((performance.now() - started) * 1000) / items,
  }
}

/** A call as the ingest scenario's load generator sends it, enriched as the Tracking API stores it. */
function call(sourceId: string, messageId: string, now: number, routeTo: AcceptedMessage['routeTo']) {
  const iso = new Date(now).toISOString()
  return {
    sourceId,
    messageId,
    type: 'track',
    receivedAt: now,
    routeTo,
    userId: 'bench-user',
    payloadJson: JSON.stringify({
      type: 'track',
      userId: 'bench-user',
      event: 'Order Completed',
      properties: { total: 12.5, currency: 'EUR', items: 3 },
      context: { library: { name: 'bench' }, ip: '127.0.0.1' },
      messageId,
      timestamp: iso,
      originalTimestamp: iso,
      sentAt: iso,
      receivedAt: iso,
    }),
  } satisfies AcceptedMessage
}

async function withStore<T>(use: (store: SqliteStore) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-floor-'))
  const store = new SqliteStore({ dataDir, synchronous: 'FULL', dedupeWindowMs: 24 * 3_600_000 })
  try {
    await store.migrate()
    return await use(store)
  } finally {
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function ingestFloor(): Promise<{ cpuUs: number; wallUs: number }[]> {
  return withStore(async (store) => {
    const source = await store.createSource({ name: 'bench', enabled: true })
    const results: { cpuUs: number; wallUs: number }[] = []
    let next = 0
    for (let round = 0; round <= rounds; round++) {
      const batches: AcceptedMessage[][] = []
      for (let offset = 0; offset < ingestPerRound; offset += ingestCommit) {
        const now = Date.now()
        batches.push(
          Array.from({ length: ingestCommit }, () => call(source.id, `floor-${next++}`, now, ['webhooks'])),
        )
      }
      const measured = await timed(ingestPerRound, async () => {
        for (const batch of batches) await store.ingest(batch)
      })
      if (round > 0) results.push(measured) // round 0 warms the JIT and the page cache
    }
    return results
  })
}

async function deliveryFloor(): Promise<{ cpuUs: number; wallUs: number }[]> {
  return withStore(async (store) => {
    const source = await store.createSource({ name: 'bench', enabled: true })
    const destination = await store.createDestination({
      name: 'floor',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }], sharedSecret: 'bench-secret' },
    })
    const backlog = deliveriesPerRound * (rounds + 1) + outcomeCommit
    for (let offset = 0; offset < backlog; offset += 1_000) {
      const now = Date.now()
      await store.ingest(
        Array.from({ length: Math.min(1_000, backlog - offset) }, (_, i) =>
          call(source.id, `drain-${offset + i}`, now, ['webhooks']),
        ),
      )
    }
    const claim = () => ({
      destinationId: destination.id,
      limit: outcomeCommit,
      now: Date.now(),
      leaseMs: 30_000,
    })
    const delivered = (delivery: ClaimedDelivery, now: number): DeliveryOutcome => ({
      deliveryId: delivery.id,
      attempts: [
        {
          attemptedAt: now,
          url: 'http://127.0.0.1:9/hook',
          statusCode: 200,
          errorKind: null,
          errorText: null,
          latencyMs: 1,
          responseExcerpt: '{"success":true}',
        },
      ],
      status: 'delivered',
      deadLettered: false,
      nextAttemptAt: null,
      firstAttemptAt: now,
      closedUrls: [],
    })
    let claimed = await store.claimDeliveries(destination.id, outcomeCommit, Date.now(), 30_000)
    const results: { cpuUs: number; wallUs: number }[] = []
    for (let round = 0; round <= rounds; round++) {
      const measured = await timed(deliveriesPerRound, async () => {
        for (let done = 0; done < deliveriesPerRound; done += outcomeCommit) {
          const now = Date.now()
          const [next] = await store.recordOutcomes(
            claimed.map((delivery) => delivered(delivery, now)),
            [claim()],
          )
          claimed = next ?? []
        }
      })
      if (round > 0) results.push(measured)
    }
    return results
  })
}

export interface StoreFloor {
  /** Median CPU per call (ingest) or per delivery, µs. */
  cpuUs: number
  cpuUsRange: [number, number]
  /** Median wall time per call or delivery, µs (adds the fsync wait). */
  wallUs: number
  rounds: number
  perCommit: number
}

const summary = (runs: { cpuUs: number; wallUs: number }[], perCommit: number): StoreFloor => ({
  cpuUs: round1(median(runs.map((run) => run.cpuUs))),
  cpuUsRange: [
    round1(Math.min(...runs.map((run) => run.cpuUs))),
    round1(Math.max(...runs.map((run) => run.cpuUs))),
  ],
  wallUs: round1(median(runs.map((run) => run.wallUs))),
  rounds: runs.length,
  perCommit,
})

if (import.meta.main) {
  const part = process.argv[2]
  if (part !== 'ingest' && part !== 'delivery')
    throw new Error('usage: store-floor.ts ingest|delivery [--quick]')
  const floor =
    part === 'ingest'
      ? summary(await ingestFloor(), ingestCommit)
      : summary(await deliveryFloor(), outcomeCommit)
  process.stdout.write(`${JSON.stringify(floor)}\n`)
}
