import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { runCli, spawnSluice } from '../helpers/process.ts'
import { send } from '../helpers/tracking.ts'
import { eventually, startReceiver } from './receivers.ts'

const CONCURRENCY = 16

test('kill -9 mid-delivery, then restart: every message delivered; only unrecorded successes are sent twice', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-delivery-crash-'))
  const seen = new Map<string, number>()
  const receiver = await startReceiver((req, res, body) => {
    const { messageId } = JSON.parse(body.toString()) as { messageId: string }
    seen.set(messageId, (seen.get(messageId) ?? 0) + 1)
    setTimeout(() => res.writeHead(200).end('ok'), 20) // 1,000 take >= 1.25 s at 16 in flight
    void req
  })
  const env = {
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: 'crash-token-0123456789abcd',
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    SLUICE_DELIVERY_LEASE_MS: '1500',
    SLUICE_REQUEST_TIMEOUT_MS: '1000',
    SLUICE_DELIVERY_CONCURRENCY: String(CONCURRENCY),
  }
  try {
    const source = JSON.parse((await runCli(['sources', 'create', 'crash', '--json'], env)).stdout) as {
      id: string
      writeKey: string
    }
    let sluice = await spawnSluice(env)
    const created = await fetch(`${sluice.url}/api/v1/destinations`, {
      method: 'POST',
      headers: { authorization: 'Bearer crash-token-0123456789abcd', 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'receiver',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
      }),
    })
    assert.equal(created.status, 201, await created.text())

    const total = 1_000
    for (let b = 0; b < total / 50; b++) {
      const batch = Array.from({ length: 50 }, (_, i) => ({
        type: 'track',
        userId: 'u',
        event: 'E',
        messageId: `crash-${b * 50 + i}`,
      }))
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200)
    }
    assert.ok(await eventually(() => seen.size >= 200, 15_000), `only ${seen.size} arrived before the kill`)
    sluice.child.kill('SIGKILL')
    assert.equal(await sluice.exited, 'SIGKILL')
    const atKill = seen.size
    assert.ok(atKill < total, 'the kill must happen mid-delivery')

    sluice = await spawnSluice(env)
    // Deliveries in flight at the kill go out again once their lease (1.5 s) runs out.
    const store = new SqliteStore({ dataDir, synchronous: 'FULL' })
    let delivered = 0
    for (const end = Date.now() + 20_000; Date.now() < end && delivered < total; ) {
      delivered = await store.countDeliveries({ status: 'delivered' })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await store.close()
    sluice.child.kill('SIGTERM')
    assert.equal(await sluice.exited, 0)
    assert.equal(delivered, total, 'every delivery recorded as delivered')
    assert.equal(seen.size, total, 'every message arrived')

    const duplicates = [...seen.values()].reduce((sum, n) => sum + (n - 1), 0)
    console.log(
      `delivery crash: ${total} messages, ${atKill} arrived before the kill, ${duplicates} duplicates`,
    )
    // Only successes not yet recorded at the kill can be sent twice: at most CONCURRENCY requests in
    // flight, plus outcomes settled within the engine's few-millisecond commit grouping (they free
    // their slot at once, so at most another CONCURRENCY).
    assert.ok(
      duplicates <= 2 * CONCURRENCY,
      `${duplicates} duplicates; at most ${2 * CONCURRENCY} successes can be unrecorded at a kill`,
    )
  } finally {
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
