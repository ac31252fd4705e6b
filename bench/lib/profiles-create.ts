// Child of bench/profiles.ts: on a seeded store, creates an audience with a destination and runs the
// evaluation step until every member's identify is enqueued. Prints {seconds, members, deliveries,
// peakRssMb} as JSON; the process does nothing else, so its peak RSS is the creation's.
//   node bench/lib/profiles-create.ts <dataDir>
import { loadConfig, openStore } from '@sluice/server'

const [dataDir = ''] = process.argv.slice(2)
// The store as the server runs it (SQLite on its own thread), without fsyncs: the figures are about
// profiles, not the disk.
const store = await openStore(
  loadConfig({ SLUICE_DATA_DIR: dataDir, SLUICE_SQLITE_SYNCHRONOUS: 'NORMAL', LOG_LEVEL: 'silent' }),
)
const destination = await store.createDestination({
  name: 'bench',
  type: 'webhooks',
  enabled: true,
  sourceIds: [],
  settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }], sharedSecret: null },
})
const started = performance.now()
const audience = await store.createAudience({
  name: 'Big Spenders',
  key: 'big_spenders',
  definition: {
    all: [
      { event: 'Order Completed', where: [{ property: 'total', op: '>=', value: 150 }], withinDays: 30 },
      { not: { event: 'Order Completed', where: [{ property: 'plan', op: '=', value: 'pro' }] } },
    ],
  },
  destinationIds: [destination.id],
  includeAnonymous: false,
})
let deliveries = 0
for (;;) {
  const step = await store.evaluateComputations(1_000)
  deliveries += step.deliveriesCreated
  if (step.evaluated === 0) break
}
const seconds = (performance.now() - started) / 1000
const members = await store.computationSize(audience!.id)
await store.close()
console.log(
  JSON.stringify({
    seconds: Number(seconds.toFixed(2)),
    members,
    deliveries,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
)
