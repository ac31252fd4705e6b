// One client benchmark run, in its own process: N track calls in a tight loop to the sink, then
// close and wait for delivery. Run with --expose-gc. Prints one JSON line:
// { calls, enqueueMs, enqueueCpuMs, heapBeforeMb, heapGrowthMb, retainedMb, peakHeapGrowthMb, totalMs }
// heapGrowthMb: heapUsed right after the loop minus before (garbage included, as a process sees it);
// retainedMb: the same after a full GC, i.e. what the client really holds for the queued calls.
// enqueueCpuMs: the main thread's CPU time in the loop (wall time minus time the thread waited,
// e.g. for a core on a loaded machine); reported alongside, the goals use the wall time.
// With `enqueue-only`, exits right after the loop and prints { calls, enqueueMs, enqueueCpuMs }:
// the loop never yields, so nothing has been sent yet and the figure is the same as a full run's.
// argv: <sluice|segment> <sink url> <calls> <flushAt> [enqueue-only]
import { Analytics as SegmentAnalytics } from '@segment/analytics-node'
import { Analytics } from '@sluice/analytics'

const [library, url, callsArg, flushAtArg, mode] = process.argv.slice(2)
const calls = Number(callsArg)
const flushAt = Number(flushAtArg)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc || !url || !(calls > 0) || !(flushAt > 0)) {
  throw new Error(
    'usage: node --expose-gc client-runner.ts <sluice|segment> <url> <calls> <flushAt> [enqueue-only]',
  )
}

interface Client {
  track(params: { userId: string; event: string; properties: Record<string, unknown> }): unknown
  finish(): Promise<unknown>
}

// Both with their defaults except the sink address and flushAt; both wait up to 10 minutes at the end.
function create(): Client {
  if (library === 'sluice') {
    const analytics = new Analytics({ writeKey: 'bench', endpoint: url!, flushAt })
    return { track: (params) => analytics.track(params), finish: () => analytics.close({ timeout: 600_000 }) }
  }
  const analytics = new SegmentAnalytics({ writeKey: 'bench', host: url!, flushAt })
  return {
    track: (params) => analytics.track(params),
    finish: () => analytics.closeAndFlush({ timeout: 600_000 }),
  }
}

function loop(client: Client, count: number): number {
  const start = performance.now()
  cpuBefore = process.threadCpuUsage()
  for (let i = 0; i < count; i++) {
    client.track({
      userId: `user-${i % 1000}`,
      event: 'Order Completed',
      properties: { orderId: i, total: 12.5, currency: 'USD' },
    })
  }
  const elapsed = performance.now() - start
  cpuAfter = process.threadCpuUsage()
  return elapsed
}

let cpuBefore = { user: 0, system: 0 }
let cpuAfter = { user: 0, system: 0 }
const cpuMs = () => (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) / 1000

const client = create()
// What the queue holds on the V8 heap and in array buffers outside it (where @sluice/analytics keeps
// sealed batches as bytes): heap alone would not count them.
const heapUsed = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return heapUsed + arrayBuffers
}
gc()
const heapBefore = heapUsed()
let peakHeap = heapBefore

const start = performance.now()
const enqueueMs = loop(client, calls)
if (mode === 'enqueue-only') {
  console.log(JSON.stringify({ calls, enqueueMs, enqueueCpuMs: cpuMs() }))
  process.exit(0)
}
const heapAfterEnqueue = heapUsed()
peakHeap = Math.max(peakHeap, heapAfterEnqueue)
// Nothing is sent before the loop yields, so this GC delays both clients' sending alike; its
// time is left out of the delivery time anyway.
const gcStart = performance.now()
gc()
const retained = heapUsed() - heapBefore
const gcMs = performance.now() - gcStart

const sampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, heapUsed())
}, 20)
await client.finish()
const totalMs = performance.now() - start - gcMs
clearInterval(sampler)

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10
console.log(
  JSON.stringify({
    calls,
    enqueueMs,
    enqueueCpuMs: cpuMs(),
    heapBeforeMb: mb(heapBefore),
    heapGrowthMb: mb(heapAfterEnqueue - heapBefore),
    retainedMb: mb(retained),
    peakHeapGrowthMb: mb(peakHeap - heapBefore),
    totalMs,
  }),
)
