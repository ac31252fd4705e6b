// The retention sweep on SQLite's store worker, which answers one call at a time: a sweep of many
// chunks gives the calls that arrive meanwhile their turn between its chunks, so an ingest made while
// it runs is answered before the sweep ends, not after all of it.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import { message } from './contract.ts'

const DAY = 86_400_000

test('an ingest made while a long retention sweep runs is answered between its chunks', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-sweep-'))
  const store = new ThreadedSqliteStore({ dataDir, synchronous: 'NORMAL' })
  try {
    await store.migrate()
    const source = await store.createSource({ name: 'web', enabled: true })
    const call = (messageId: string, receivedAt: number) =>
      message(source, messageId, {
        receivedAt,
        userId: 'u',
        payloadJson: JSON.stringify({ type: 'track', messageId, userId: 'u', event: 'E' }),
      })
    // Four chunks' worth of calls past retention, every one consumed by profiles (so sweepable).
    const old = Date.now() - 40 * DAY
    for (let batch = 0; batch < 20; batch++) {
      await store.ingest(Array.from({ length: 1_000 }, (_, i) => call(`old-${batch}-${i}`, old)))
    }
    while ((await store.consumeIntoProfiles()) > 0) {}

    const order: string[] = []
    const sweeping = store.sweep(Date.now() - 30 * DAY).then((swept) => {
      order.push('sweep')
      return swept
    })
    const ingesting = store.ingest([call('new', Date.now())]).then(() => order.push('ingest'))
    const [swept] = await Promise.all([sweeping, ingesting])
    assert.equal(swept.messages, 20_000)
    assert.deepEqual(order, ['ingest', 'sweep'], 'the ingest did not wait for the whole sweep')
    assert.equal(await store.countMessages(source.id), 1)
  } finally {
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
