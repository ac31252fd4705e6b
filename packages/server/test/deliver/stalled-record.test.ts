/**
 * A delivery's outcome settled but its commit held up (the store busy with a long call, such as a
 * retention sweep after downtime) past the delivery's lease: a claim that reaches the store before
 * that commit finds the delivery pending with its lease run out, and leases it again. The engine MUST
 * NOT send it a second time. A real SQLite store, a real receiver; the commit is held at a gate.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DeliveryEngine } from '../../src/deliver/engine.ts'
import { WebhookSender } from '../../src/deliver/http-sender.ts'
import { retrySettings } from '../../src/deliver/retry-policy.ts'
import type { Logger } from '../../src/lib/logger.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { eventually, sleep, startReceiver } from './receivers.ts'

test('a delivery whose outcome waits to be committed past its lease is not sent again by a claim that overtakes the commit', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-stalled-'))
  const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
  const receiver = await startReceiver()
  let engine: DeliveryEngine | undefined
  let openGate = () => {}
  try {
    await store.migrate()
    const source = await store.createSource({ name: 'web', enabled: true })
    const destination = await store.createDestination({
      name: 'hook',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${receiver.url}/hook`, headers: {} }], sharedSecret: null },
    })
    const receivedAt = Date.now()
    const at = new Date(receivedAt).toISOString()
    await store.ingest([
      {
        sourceId: source.id,
        messageId: 'once',
        type: 'track',
        receivedAt,
        routeTo: ['webhooks'],
        payloadJson: JSON.stringify({
          type: 'track',
          messageId: 'once',
          userId: 'u',
          event: 'E',
          timestamp: at,
          receivedAt: at,
        }),
        userId: 'u',
      },
    ])
    // The first commit of outcomes waits at the gate for twice the lease; claims go straight on.
    const gate = new Promise<void>((resolve) => {
      openGate = resolve
    })
    let held = false
    let claims = 0
    const stalled = new Proxy(store, {
      get(target, property, receiverObject) {
        const value = Reflect.get(target, property, receiverObject)
        if (property === 'claimDeliveries' && typeof value === 'function') {
          return async (...args: unknown[]) => {
            const claimed = await value.apply(target, args)
            claims += (claimed as unknown[]).length
            return claimed
          }
        }
        if (property !== 'recordOutcomes' || typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          if (!held) {
            held = true
            await gate
          }
          return value.apply(target, args)
        }
      },
    })
    const leaseMs = 1_500
    const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger
    engine = new DeliveryEngine({
      store: stalled,
      logger: silent,
      sender: new WebhookSender({ allowPrivate: true, timeoutMs: 300 }),
      retry: retrySettings({ requestTimeoutMs: 300 }),
      leaseMs,
      pollIntervalMs: 50,
    })
    engine.start()
    assert.ok(await eventually(() => held, 5_000), 'the outcome reached the held commit')
    assert.equal(receiver.requests.length, 1)
    // Well past the lease: the engine has claimed the delivery again meanwhile (it polls every 50 ms).
    await sleep(2 * leaseMs)
    // Once its lease ran out; again each time the lease of that claim ran out too (the sleep spans two).
    assert.ok(claims >= 2, `claimed again while its outcome waited (${claims} claims in all)`)
    openGate()
    await sleep(500) // a moment for anything claimed to be sent
    assert.equal(receiver.requests.length, 1, 'sent once, though claimed again while its outcome waited')
    const [delivery] = await store.listDeliveries(destination.id, { limit: 10 })
    assert.equal(delivery?.status, 'delivered')
  } finally {
    openGate() // a failed assertion must not leave the engine waiting on its commit
    await engine?.stop()
    await receiver.close()
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
