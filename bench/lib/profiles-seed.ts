// Child of bench/profiles.ts: stores `calls` accepted calls from `profiles` users (10 each: orders with
// varied totals and page views) into a SQLite store, then lets the profile worker's step consume them
// all. Prints {seedSeconds, consumeSeconds} as JSON.
//   node bench/lib/profiles-seed.ts <dataDir> <profiles> <callsPerProfile>
import { loadConfig, openStore } from '@sluice/server'

const [dataDir = '', profilesArg = '100000', perProfileArg = '10'] = process.argv.slice(2)
const profiles = Number(profilesArg)
const perProfile = Number(perProfileArg)
// The store as the server runs it (SQLite on its own thread), without fsyncs: the figures are about
// profiles, not the disk.
const store = await openStore(
  loadConfig({ SLUICE_DATA_DIR: dataDir, SLUICE_SQLITE_SYNCHRONOUS: 'NORMAL', LOG_LEVEL: 'silent' }),
)
const source = await store.createSource({ name: 'bench', enabled: true })
const started = performance.now()
const now = Date.now()
const BATCH = 2_000
let batch = []
for (let sequence = 0; sequence < profiles * perProfile; sequence++) {
  const user = sequence % profiles
  const order = sequence % 3 !== 0
  const payload = {
    type: 'track',
    userId: `user-${user}`,
    event: order ? 'Order Completed' : 'Page Viewed',
    properties: order
      ? { total: (sequence * 7919) % 200, plan: user % 4 === 0 ? 'pro' : 'free' }
      : { path: '/' },
    messageId: `seed-${sequence}`,
    timestamp: new Date(now - (sequence % 60) * 86_400_000).toISOString(),
  }
  batch.push({
    sourceId: source.id,
    messageId: payload.messageId,
    type: 'track' as const,
    receivedAt: now,
    routeTo: [],
    payloadJson: JSON.stringify(payload),
  })
  if (batch.length === BATCH) {
    await store.ingest(batch)
    batch = []
  }
}
if (batch.length > 0) await store.ingest(batch)
const seeded = performance.now()
while ((await store.consumeIntoProfiles(BATCH)) > 0) {}
const consumed = performance.now()
await store.close()
console.log(
  JSON.stringify({
    seedSeconds: Number(((seeded - started) / 1000).toFixed(1)),
    consumeSeconds: Number(((consumed - seeded) / 1000).toFixed(1)),
  }),
)
