/**
 * A delivery's outcome settled but its commit held up (the store busy with a long call, such as a
 * retention sweep after downtime, or a PostgreSQL commit still running the claims it carries). A claim
 * that reads the delivery before the record MUST NOT send it again; a claim that reads it after the
 * record (a retry now due) MUST send it at once, not leave it for its lease; and so MUST NOT a claim
 * that read it before the record and answers after the commit does (PostgreSQL runs claims on another
 * connection); nor a batch formed meanwhile. The same for batches. Real SQLite and PostgreSQL stores
 * and a real receiver; the commit of outcomes is held at a gate, before or after the store records
 * it, and a claim's answer can be held at another.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { DeliveryEngine } from '../../src/deliver/engine.ts'
import { WebhookSender } from '../../src/deliver/http-sender.ts'
import { retrySettings } from '../../src/deliver/retry-policy.ts'
import type { Logger } from '../../src/lib/logger.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore } from '../store/pg.ts'
import { eventually, type Receiver, type Respond, sleep, startReceiver } from './receivers.ts'

type Backend = 'sqlite' | 'postgres'

interface Held {
  store: Store
  receiver: Receiver
  destinationId: string
  /** Whether the first commit of outcomes has reached the gate. */
  held: () => boolean
  /** Deliveries (or batches) claimed so far (the engine's own claims, outside commits). */
  claims: () => number
  openGate: () => void
  /** Whether the first commit of outcomes has returned to the engine. */
  committed: () => boolean
  /** Whether a claim's answer holding a delivery waits at the claim gate (`holdClaim`). */
  claimHeld: () => boolean
  openClaimGate: () => void
  /** What the engine warned of so far. */
  warnings: () => string[]
}

/**
 * One stored call to one destination; an engine whose first commit of outcomes waits at a gate,
 * `before` the store records it or `after`. Runs `body`, then always cleans up.
 */
async function withHeldCommit(
  options: {
    backend: Backend
    gate: 'before' | 'after'
    respond?: Respond
    leaseMs: number
    retryDelayMs?: number
    /** Hold the answer of the first claim that returns a delivery while the commit is held. */
    holdClaim?: boolean
    /** The destination batches (the call goes as a batch of one; its claims and commits are the batches'). */
    batching?: boolean
  },
  body: (held: Held) => Promise<void>,
): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-stalled-'))
  const schema = options.backend === 'postgres' ? await freshSchema() : null
  const store: Store = schema
    ? await openPgStore(schema.schema)
    : new SqliteStore({ dataDir, synchronous: 'NORMAL' })
  const receiver = await startReceiver(options.respond)
  let engine: DeliveryEngine | undefined
  let openGate = () => {}
  let openClaimGate = () => {}
  try {
    if (!schema) await store.migrate() // openPgStore has migrated its store
    const source = await store.createSource({ name: 'web', enabled: true })
    const destination = await store.createDestination({
      name: 'hook',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: {
        webhooks: [{ url: `${receiver.url}/hook`, headers: {} }],
        sharedSecret: null,
        ...(options.batching ? { batching: { maxEvents: 10, maxBytes: 500_000, maxWaitMs: 0 } } : {}),
      },
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
    const gate = new Promise<void>((resolve) => {
      openGate = resolve
    })
    const claimGate = new Promise<void>((resolve) => {
      openClaimGate = resolve
    })
    let held = false
    let committed = false
    let claimHeld = false
    let claims = 0
    const stalled = new Proxy(store, {
      get(target, property, receiverObject) {
        const value = Reflect.get(target, property, receiverObject)
        const [claimMethod, recordMethod] = options.batching
          ? ['claimBatches', 'recordBatchOutcomes']
          : ['claimDeliveries', 'recordOutcomes']
        if (property === claimMethod && typeof value === 'function') {
          return async (...args: unknown[]) => {
            const claimed = await value.apply(target, args)
            claims += (claimed as unknown[]).length
            if (options.holdClaim && held && !committed && !claimHeld && (claimed as unknown[]).length > 0) {
              claimHeld = true
              await claimGate
            }
            return claimed
          }
        }
        if (property !== recordMethod || typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          const first = !held
          held = true
          if (first && options.gate === 'before') await gate
          const result = await value.apply(target, args)
          if (first && options.gate === 'after') await gate
          if (first) committed = true
          return result
        }
      },
    })
    const warnings: string[] = []
    const logger = {
      error() {},
      warn: (_fields: unknown, text: string) => warnings.push(text),
      info() {},
      debug() {},
    } as unknown as Logger
    const delay = options.retryDelayMs ?? 1_000
    engine = new DeliveryEngine({
      store: stalled,
      logger,
      sender: new WebhookSender({ allowPrivate: true, timeoutMs: 300 }),
      retry: retrySettings({ requestTimeoutMs: 300, baseDelayMs: delay, maxDelayMs: delay }),
      leaseMs: options.leaseMs,
      pollIntervalMs: 50,
    })
    engine.start()
    await body({
      store,
      receiver,
      destinationId: destination.id,
      held: () => held,
      claims: () => claims,
      openGate,
      committed: () => committed,
      claimHeld: () => claimHeld,
      openClaimGate,
      warnings: () => warnings,
    })
  } finally {
    // A failed assertion must not leave the engine waiting on its commit or a claim.
    openGate()
    openClaimGate()
    await engine?.stop()
    await receiver.close()
    await store.close()
    await schema?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(backend, () => {
    test('a delivery whose outcome waits to be committed past its lease is not sent again by a claim that overtakes the commit', async () => {
      const leaseMs = 1_500
      await withHeldCommit(
        { backend, gate: 'before', leaseMs },
        async ({ store, receiver, destinationId, ...held }) => {
          assert.ok(await eventually(held.held, 5_000), 'the outcome reached the held commit')
          assert.equal(receiver.requests.length, 1)
          // Well past the lease: the engine has claimed the delivery again meanwhile (it polls every 50 ms).
          await sleep(2 * leaseMs)
          // Once its lease ran out; again each time the lease of that claim ran out too (the sleep spans two).
          assert.ok(
            held.claims() >= 2,
            `claimed again while its outcome waited (${held.claims()} claims in all)`,
          )
          held.openGate()
          await sleep(500) // a moment for anything claimed to be sent
          assert.equal(
            receiver.requests.length,
            1,
            'sent once, though claimed again while its outcome waited',
          )
          const [delivery] = await store.listDeliveries(destinationId, { limit: 10 })
          assert.equal(delivery?.status, 'delivered')
        },
      )
    })

    for (const batching of [false, true]) {
      const what = batching ? 'a batch' : 'a delivery'
      test(`${what} is not sent again by a claim that read it before its outcome was recorded and answers after that commit returned`, async () => {
        // Long enough that the late claim's answer still leaves time for a request: the previous rule
        // then sends it again, rather than leaving it for its lease (the warning asserted below).
        const leaseMs = 3_000
        const options = { backend, gate: 'before' as const, leaseMs, holdClaim: true, batching }
        await withHeldCommit(options, async ({ store, receiver, destinationId, ...held }) => {
          assert.ok(await eventually(held.held, 5_000), 'the outcome reached the held commit')
          assert.equal(receiver.requests.length, 1)
          // Its lease runs out while the outcome waits: the engine's next claim reads it, unrecorded.
          assert.ok(await eventually(held.claimHeld, 3 * leaseMs), 'a claim took the delivery back')
          held.openGate()
          assert.ok(await eventually(held.committed, 5_000), 'the outcome was committed')
          await sleep(100) // the engine takes in the commit's answer first, as it may on PostgreSQL
          held.openClaimGate()
          await sleep(500) // a moment for anything claimed to be sent
          assert.equal(receiver.requests.length, 1, 'sent once, though the claim that read it answered late')
          assert.deepEqual(
            held.warnings().filter((text) => text.includes('lease')),
            [],
            'dropped from the claim, not left for a lease run short',
          )
          const [delivery] = await store.listDeliveries(destinationId, { limit: 10 })
          assert.equal(delivery?.status, 'delivered')
        })
      })
    }

    test('a delivery whose outcome waits past its lease does not join a batch when its destination begins batching', async () => {
      const leaseMs = 1_500
      await withHeldCommit(
        { backend, gate: 'before', leaseMs },
        async ({ store, receiver, destinationId, ...held }) => {
          assert.ok(await eventually(held.held, 5_000), 'the outcome reached the held commit')
          assert.equal(receiver.requests.length, 1)
          const settings = {
            webhooks: [{ url: `${receiver.url}/hook`, headers: {} }],
            sharedSecret: null,
            batching: { maxEvents: 10, maxBytes: 500_000, maxWaitMs: 0 },
          }
          assert.ok(await store.updateDestination(destinationId, { settings }))
          // Past the lease: the delivery, unleased and in no batch, is a batch candidate meanwhile.
          await sleep(2 * leaseMs)
          held.openGate()
          await sleep(500) // a moment for anything formed to be sent
          assert.equal(receiver.requests.length, 1, 'sent once, not again in a batch')
          const [delivery] = await store.listDeliveries(destinationId, { limit: 10 })
          assert.equal(delivery?.status, 'delivered')
          assert.equal(delivery?.attemptCount, 1)
        },
      )
    })

    test('a retry that falls due after its failure is recorded, while that commit has not returned, is sent at once', async () => {
      let calls = 0
      const refuseFirst: Respond = (_req, res) => {
        calls++
        res.writeHead(calls === 1 ? 503 : 200).end()
      }
      // The lease far longer than the wait below: a retry left for its lease would not be sent in it.
      const options = {
        backend,
        gate: 'after' as const,
        respond: refuseFirst,
        leaseMs: 20_000,
        retryDelayMs: 50,
      }
      await withHeldCommit(options, async ({ store, receiver, destinationId, ...held }) => {
        assert.ok(await eventually(held.held, 5_000), 'the failure reached the held commit')
        // The failure is recorded (retrying, due in 50 ms); the commit has not returned to the engine.
        assert.ok(
          await eventually(() => receiver.requests.length === 2, 3_000),
          `the retry was sent while the commit was held (${receiver.requests.length} requests)`,
        )
        held.openGate()
        let status: string | undefined
        for (const end = Date.now() + 5_000; status !== 'delivered' && Date.now() < end; await sleep(20))
          status = (await store.listDeliveries(destinationId, { limit: 1 }))[0]?.status
        assert.equal(status, 'delivered', 'delivered by the retry')
        assert.equal(receiver.requests.length, 2)
      })
    })
  })
}
