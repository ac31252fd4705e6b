// The pipeline's floor: the least a durable delivery loop does on this machine. It drains a backlog
// of one destination the way the delivery engine must — claim with a lease, POST, record the outcome
// and an attempt row in fsynced group commits (one at a time, each also claiming the next batch),
// with in-flight + unrecorded below 2 × concurrency (the duplicate bound) — and none of the engine's
// own work: no signing, no retry decision, no metrics, tracing or logging.
//   node bench/lib/pipeline-floor.ts <receiverUrl> <count> <concurrency> sluice-store|sluice-store-inline|bare-tables
// - sluice-store: Sluice's store on its worker thread, as Sluice runs it (the body: the stored
//   payload, re-serialized);
// - sluice-store-inline: Sluice's store on this thread, so each commit's fsync blocks the event loop;
// - bare-tables: no Sluice code at all: a worker thread with two bare tables, the due index a
//   retrying design needs and leases in memory (pipeline-floor-worker.ts), the body sent as stored.
// Prints JSON on stdout, like drain-backlog.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { ClaimedDelivery, Store } from '@sluice/server'
import { Pool } from 'undici'
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts'
import { ThreadedSqliteStore } from '../../packages/server/src/store/sqlite/threaded-store.ts'
import { backlogMessages } from './backlog-messages.ts'
import { measureThreadCpu } from './thread-cpu.ts'

interface Claimed {
  id: number
  body: string
}
interface Outcome {
  id: number
  attemptedAt: number
  statusCode: number
  latencyMs: number
  excerpt: string
}
/** What the loop asks of a store: claims, and outcomes recorded with the next claim. */
interface FloorStore {
  claim(limit: number): Promise<Claimed[]>
  record(outcomes: Outcome[], claimLimit: number): Promise<Claimed[]>
  pending(): Promise<number>
  close(): Promise<void>
}

const round1 = (value: number) => Math.round(value * 10) / 10
const [url = '', countArg = '10000', concurrencyArg = '32', mode = 'sluice-store'] = process.argv.slice(2)
const modes = ['sluice-store', 'sluice-store-inline', 'bare-tables']
if (!modes.includes(mode)) throw new Error(`mode must be one of ${modes.join(', ')}; got "${mode}"`)
const count = Number(countArg)
const concurrency = Number(concurrencyArg)
const leaseMs = 30_000
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-pipeline-'))

async function sluiceStore(inline: boolean): Promise<FloorStore> {
  const options = { dataDir, synchronous: 'FULL' as const, dedupeWindowMs: 24 * 3_600_000 }
  const store: Store = inline ? new SqliteStore(options) : new ThreadedSqliteStore(options)
  await store.migrate()
  const source = await store.createSource({ name: 'bench', enabled: true })
  const destination = await store.createDestination({
    name: 'floor',
    type: 'webhooks',
    enabled: true,
    sourceIds: [source.id],
    settings: { webhooks: [{ url, headers: {} }], sharedSecret: 'bench-secret' },
  })
  const now = Date.now()
  for (let offset = 0; offset < count; offset += 1_000) {
    await store.ingest(backlogMessages(source.id, offset, Math.min(count, offset + 1_000), now))
  }
  const asClaimed = (deliveries: ClaimedDelivery[] = []) =>
    deliveries.map((delivery) => ({ id: delivery.id, body: JSON.stringify(delivery.payload) }))
  const claims = (limit: number) =>
    limit > 0 ? [{ destinationId: destination.id, limit, now: Date.now(), leaseMs }] : []
  return {
    claim: async (limit) =>
      asClaimed(await store.claimDeliveries(destination.id, limit, Date.now(), leaseMs)),
    record: async (outcomes, limit) => {
      const [claimed] = await store.recordOutcomes(
        outcomes.map((outcome) => ({
          deliveryId: outcome.id,
          attempts: [
            {
              attemptedAt: outcome.attemptedAt,
              url,
              statusCode: outcome.statusCode,
              errorKind: null,
              errorText: null,
              latencyMs: outcome.latencyMs,
              responseExcerpt: outcome.excerpt,
            },
          ],
          status: 'delivered',
          deadLettered: false,
          nextAttemptAt: null,
          firstAttemptAt: outcome.attemptedAt,
          closedUrls: [],
        })),
        claims(limit),
      )
      return asClaimed(claimed)
    },
    pending: () => store.countDeliveries({ destinationId: destination.id, status: 'pending' }),
    close: () => store.close(),
  }
}

async function bareTables(): Promise<FloorStore> {
  const worker = new Worker(join(import.meta.dirname, 'pipeline-floor-worker.ts'), {
    workerData: { path: join(dataDir, 'floor.db'), count },
  })
  const replies: ((value: unknown) => void)[] = []
  worker.on('message', (value) => replies.shift()?.(value))
  const call = <T>(message: unknown) =>
    new Promise<T>((resolve) => {
      replies.push(resolve as (value: unknown) => void)
      if (message !== undefined) worker.postMessage(message)
    })
  await call(undefined) // the worker's first message: seeded and ready
  const asClaimed = ({ ids, bodies }: { ids: number[]; bodies: string[] }) =>
    ids.map((id, i) => ({ id, body: bodies[i]! }))
  return {
    claim: async (limit) => asClaimed(await call({ kind: 'claim', limit })),
    record: async (outcomes, limit) =>
      asClaimed(
        await call({
          kind: 'record',
          limit,
          outcomes: outcomes.flatMap((o) => [o.id, o.attemptedAt, o.statusCode, o.latencyMs, o.excerpt]),
        }),
      ),
    pending: () => call({ kind: 'pending' }),
    close: () => worker.terminate().then(() => {}),
  }
}

const inline = mode === 'sluice-store-inline'
const store = mode === 'bare-tables' ? await bareTables() : await sluiceStore(inline)
const target = new URL(url)
const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1 })
const ready: Claimed[] = []
let inFlight = 0
let unrecorded = 0
let claiming = false
let recording = false
let pending: Outcome[] = []
let recorded = 0
const { promise: finished, resolve: finish } = Promise.withResolvers<void>()

const wanted = () => {
  const want = 2 * concurrency - inFlight - ready.length
  return claiming || want < Math.ceil(concurrency / 2) ? 0 : want
}

function startReady(): void {
  while (inFlight < concurrency && inFlight + unrecorded < 2 * concurrency && ready.length > 0) {
    void send(ready.shift()!)
  }
}

async function claim(): Promise<void> {
  const want = wanted()
  if (want === 0) return
  claiming = true
  ready.push(...(await store.claim(want)))
  claiming = false
  startReady()
}

async function send(delivery: Claimed): Promise<void> {
  inFlight++
  const startedAt = performance.now()
  const response = await pool.request({
    path: target.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Sluice/1.0' },
    body: delivery.body,
  })
  const excerpt = (await response.body.text()).slice(0, 200)
  inFlight--
  unrecorded++
  pending.push({
    id: delivery.id,
    attemptedAt: Date.now(),
    statusCode: response.statusCode,
    latencyMs: performance.now() - startedAt,
    excerpt,
  })
  if (!recording) void record()
  startReady()
}

/** One fsynced commit at a time; each records what settled meanwhile and claims the next batch. */
async function record(): Promise<void> {
  recording = true
  // Inline, the store answers without yielding: let the responses already in gather first.
  if (inline) await new Promise((resolve) => setImmediate(resolve))
  while (pending.length > 0) {
    const batch = pending
    pending = []
    const want = wanted()
    if (want > 0) claiming = true
    const claimed = await store.record(batch, want)
    claiming = false
    unrecorded -= batch.length
    recorded += batch.length
    ready.push(...claimed)
    startReady()
    if (ready.length === 0) void claim()
    if (inline) await new Promise((resolve) => setImmediate(resolve))
  }
  recording = false
  if (recorded >= count) finish()
}

const rss = process.memoryUsage().rss
const cpuBefore = { thread: process.threadCpuUsage(), process: process.cpuUsage() }
const threadCpu = measureThreadCpu(process.pid)
const started = performance.now()
await claim()
await finished
const seconds = (performance.now() - started) / 1000
const mainCpu = process.threadCpuUsage(cpuBefore.thread)
const processCpu = process.cpuUsage(cpuBefore.process)
const byKind = threadCpu()?.byKind
const peakRss = Math.max(rss, process.memoryUsage().rss)
const left = await store.pending()
if (left !== 0) throw new Error(`${left} deliveries left pending`)
await pool.close()
await store.close()
await rm(dataDir, { recursive: true, force: true })
process.stdout.write(
  `${JSON.stringify({
    mode,
    count,
    seconds,
    perSecond: count / seconds,
    peakRssMb: Math.round(peakRss / 1e6),
    cpuUsPerDelivery: {
      mainThread: round1((mainCpu.user + mainCpu.system) / count),
      process: round1((processCpu.user + processCpu.system) / count),
      ...(byKind && {
        storeThread: round1((byKind.workers * 1000) / count),
        v8Helpers: round1((byKind.v8 * 1000) / count),
      }),
    },
  })}\n`,
)
