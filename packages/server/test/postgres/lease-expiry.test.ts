// A claimed delivery waiting behind slow requests must not be sent once too little of its lease is
// left for a request: its lease would run out while the request runs, another process would claim it
// and send it again. Two Sluice instances on one PostgreSQL, each sending one request at a time, a
// receiver that takes 900 ms to answer, a request timeout of 1.3 s (room for a loaded machine: a timeout
// would be a legitimate second send) and a lease of 1.5 s: a process holds two claims, and the second
// would start at ~0.9 s and run past the lease.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { type Receiver, sleep, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { freshDatabase } from '../store/pg.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close().catch(() => {})
})

test('deliveries claimed by two processes behind slow requests: each call reaches the receiver once', async () => {
  const database = await freshDatabase()
  cleanup.push(() => database.drop())
  const receiver: Receiver = await startReceiver((_req, res) => {
    setTimeout(() => res.end('ok'), 900)
  })
  cleanup.push(() => receiver.close())
  const sluices: TestSluice[] = []
  for (let i = 0; i < 2; i++) {
    const sluice = await startTestSluice({
      databaseUrl: database.url,
      retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 60_000, requestTimeoutMs: 1_300 },
      deliveryLeaseMs: 1_500,
      deliveryConcurrency: 1,
      deliveryPollMs: 50,
    })
    cleanup.push(() => sluice.destroy())
    sluices.push(sluice)
  }
  const [first, second] = sluices as [TestSluice, TestSluice]
  const source = await first.createSource()
  const destination = await first.store.createDestination({
    name: 'slow receiver',
    type: 'webhooks',
    enabled: true,
    sourceIds: [source.id],
    settings: { webhooks: [{ url: `${receiver.url}/hook`, headers: {} }], sharedSecret: null },
  })
  const calls = 8
  const batch = Array.from({ length: calls }, (_, i) => ({
    type: 'track',
    userId: 'u',
    event: 'Slow',
    messageId: `slow-${i}`,
  }))
  await send(first.url, '/v1/batch', { batch: batch.slice(0, calls / 2) }, { writeKey: source.writeKey })
  await send(second.url, '/v1/batch', { batch: batch.slice(calls / 2) }, { writeKey: source.writeKey })
  const delivered = async () =>
    (await first.store.listDeliveries(destination.id, { limit: 100 })).filter(
      (delivery) => delivery.status === 'delivered',
    ).length
  const end = Date.now() + 30_000
  while ((await delivered()) < calls && Date.now() < end) await sleep(100)
  assert.equal(await delivered(), calls, 'every call is delivered')
  // A second send of a call whose outcome was recorded first would still be in flight: let it land.
  await sleep(1_500)
  const received = receiver.requests.map(
    (request) => (JSON.parse(request.body.toString()) as { messageId: string }).messageId,
  )
  const counts = new Map<string, number>()
  for (const id of received) counts.set(id, (counts.get(id) ?? 0) + 1)
  assert.deepEqual(
    [...counts].filter(([, n]) => n > 1),
    [],
    'no call was sent twice',
  )
  assert.equal(counts.size, calls)
})
