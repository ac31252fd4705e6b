// Sluice's delivery rate from a backlog: stores N messages routed to one webhooks destination while
// the engine is stopped, then starts the engine and times until every delivery is recorded as
// delivered. Prints JSON on stdout.
//   node bench/lib/drain-backlog.ts <receiverUrl> <count> <concurrency> [metrics on|off] [classic|mapped|<batch size>]
// `mapped` gives the destination a subscription every backlog call matches and a 10-field mapping
// (bench/lib/mapped-settings.ts): what they cost delivery, against `classic` (neither). A number makes
// the destination batch (settings.batching: that many messages per request).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSluice, loadConfig } from '@sluice/server'
import { backlogMessages } from './backlog-messages.ts'
import { MAPPED_SETTINGS } from './mapped-settings.ts'
import { measureThreadCpu } from './thread-cpu.ts'

const round1 = (value: number) => Math.round(value * 10) / 10
const [url = '', countArg = '10000', concurrencyArg = '32', metricsArg = 'on', settingsArg = 'classic'] =
  process.argv.slice(2)
const batching = /^\d+$/.test(settingsArg)
  ? { batching: { maxEvents: Number(settingsArg), maxBytes: 512_000, maxWaitMs: 1_000 } }
  : {}
const count = Number(countArg)
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-drain-'))
const sluice = await createSluice({
  ...loadConfig({}),
  dataDir,
  port: 0,
  logLevel: 'warn',
  allowPrivateDestinations: true,
  deliveryConcurrency: Number(concurrencyArg),
  metrics: metricsArg !== 'off',
})
const { store, engine } = sluice
const source = await store.createSource({ name: 'bench', enabled: true })
const destination = await store.createDestination({
  name: 'no-op receiver',
  type: 'webhooks',
  enabled: true,
  sourceIds: [source.id],
  settings: {
    webhooks: [{ url, headers: {} }],
    sharedSecret: 'bench-secret',
    ...(settingsArg === 'mapped' ? MAPPED_SETTINGS : {}),
    ...batching,
  },
})
const now = Date.now()
for (let offset = 0; offset < count; offset += 1_000) {
  await store.ingest(backlogMessages(source.id, offset, Math.min(count, offset + 1_000), now))
}
const rss = process.memoryUsage().rss
// CPU time, not wall time: the machine is shared, so a profile's "busy" time also counts the
// moments this thread was ready but not running. The main thread's own CPU is the figure to cut;
// the process's total adds the store worker (and V8's helper threads).
const cpuBefore = { thread: process.threadCpuUsage(), process: process.cpuUsage() }
// The rest of the process, split: the store thread, and V8's helper threads (concurrent GC and
// compilation, for both isolates).
const threadCpu = measureThreadCpu(process.pid)
const started = performance.now()
engine.start()
// Counting delivered rows is a scan on the store's thread, the thread being measured: polled every
// 50 ms it took ~30% of that thread over a 100k drain. So poll rarely while the end is far off (half
// the time the rest should take at the rate so far) and every 50 ms only near it.
let delivered = 0
while (delivered < count) {
  const elapsed = performance.now() - started
  const remainingMs = delivered > 0 ? ((count - delivered) * elapsed) / delivered : 0
  // Batches are recorded a hundred deliveries at a time: an estimate from the first few would wait
  // far past the end, so a batching drain polls every 50 ms throughout.
  const waitMs = !('batching' in batching) ? Math.min(2_000, Math.max(50, remainingMs / 2)) : 50
  await new Promise((resolve) => setTimeout(resolve, waitMs))
  delivered = await store.countDeliveries({ destinationId: destination.id, status: 'delivered' })
}
const seconds = (performance.now() - started) / 1000
const mainCpu = process.threadCpuUsage(cpuBefore.thread)
const processCpu = process.cpuUsage(cpuBefore.process)
const byKind = threadCpu()?.byKind
const peakRss = Math.max(rss, process.memoryUsage().rss)
await sluice.close()
await rm(dataDir, { recursive: true, force: true })
process.stdout.write(
  `${JSON.stringify({
    count,
    seconds,
    perSecond: count / seconds,
    peakRssMb: Math.round(peakRss / 1e6),
    cpuUsPerDelivery: {
      mainThread: round1((mainCpu.user + mainCpu.system) / count),
      process: round1((processCpu.user + processCpu.system) / count),
      // From /proc in 10 ms ticks (Linux only): coarser than the two above.
      ...(byKind && {
        storeThread: round1((byKind.workers * 1000) / count),
        v8Helpers: round1((byKind.v8 * 1000) / count),
      }),
    },
  })}\n`,
)
