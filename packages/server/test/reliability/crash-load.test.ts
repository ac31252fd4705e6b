/**
 * Crash under load: a load generator sends batches through the Tracking API without
 * pause while the Sluice process is killed with SIGKILL and restarted, 3 times (10 with
 * SLUICE_LONG_TESTS=1). The generator behaves like an SDK: a batch that got no 200 is sent again, with
 * the same messageIds, until it is acknowledged.
 *
 * Afterwards every acknowledged message has reached the receiver (lost = 0), and every duplicate is
 * explained by a kill: the two receipts of a message lie on both sides of a restart (a success the old
 * process could not record), and no kill explains more than the engine can have unrecorded — the
 * requests in flight (SLUICE_DELIVERY_CONCURRENCY) plus those settled inside the ~5 ms outcome
 * grouping window, which free their slot at once (at most another SLUICE_DELIVERY_CONCURRENCY).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { sleep, startReceiver, unusedPort } from '../deliver/receivers.ts'
import { fetchText } from '../helpers/http.ts'
import { CHILD_STOP_MS, type SluiceProcess, spawnSluice } from '../helpers/process.ts'
import { send } from '../helpers/tracking.ts'
import { LONG, ReceiptLog, until } from './helpers.ts'

const CYCLES = LONG ? 10 : 3
const CONCURRENCY = 8
const WORKERS = 3
const BATCH = 10
/** Most unrecorded successes one kill can leave: in flight, plus settled within the grouping window. */
const PER_KILL_BOUND = 2 * CONCURRENCY

test(`kill -9 under continuous load, ${CYCLES} times: nothing acknowledged is lost; duplicates only from unrecorded successes`, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-crash-load-'))
  const receipts = new ReceiptLog()
  // A fast receiver (0-3 ms): many deliveries settle every millisecond, so a kill always finds some
  // in flight and some settled whose outcome is still being committed.
  const receiver = await startReceiver((_req, res, body) => {
    receipts.record(body)
    setTimeout(() => res.writeHead(200).end('ok'), Math.random() * 3)
  })
  const port = await unusedPort() // the same address across restarts, as behind a load balancer
  const env = {
    PORT: String(port),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: 'crash-load-token-0123456789',
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // A request timeout far above the receiver's delay, so no retry happens without a kill.
    SLUICE_REQUEST_TIMEOUT_MS: '4000',
    SLUICE_DELIVERY_LEASE_MS: '5000',
    SLUICE_DELIVERY_CONCURRENCY: String(CONCURRENCY),
  }
  let sluice: SluiceProcess | undefined
  let stop = false
  // Only a backstop for a test that failed before setting `stop`: the load runs until the test is done
  // with it, however slowly a loaded machine gets through the cycles (each wait below has its own limit).
  const deadline = Date.now() + (LONG ? 900_000 : 600_000)
  try {
    sluice = await spawnSluice(env)
    const base = `http://127.0.0.1:${port}`
    const admin = { authorization: 'Bearer crash-load-token-0123456789', 'content-type': 'application/json' }
    const source = JSON.parse(
      (await fetchText(`${base}/api/v1/sources`, { method: 'POST', headers: admin, body: '{"name":"load"}' }))
        .text,
    ) as { id: string; writeKey: string }
    const created = await fetchText(`${base}/api/v1/destinations`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        name: 'receiver',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
      }),
    })
    assert.equal(created.status, 201, created.text)
    const destinationId = (JSON.parse(created.text) as { id: string }).id

    // The load generator: WORKERS senders, each resending a batch until it is acknowledged.
    const acked = new Set<string>()
    let attempts = 0
    let refused = 0
    const worker = async (w: number) => {
      for (let n = 0; !stop && Date.now() < deadline; n++) {
        const batch = Array.from({ length: BATCH }, (_, i) => ({
          type: 'track',
          userId: `user-${w}`,
          event: 'Load',
          messageId: `w${w}-b${n}-m${i}`,
        }))
        for (let tries = 0; tries < 10_000 && Date.now() < deadline; tries++) {
          attempts++
          const status = await send(base, '/v1/batch', { batch }, { writeKey: source.writeKey }).then(
            (response) => response.status,
            () => 0, // connection refused or reset: the process is down
          )
          if (status === 200) {
            for (const message of batch) acked.add(message.messageId)
            break
          }
          refused++
          await sleep(20)
        }
        await sleep(10) // a steady load of roughly 1,000-2,000 messages/s, not a benchmark
      }
    }
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w))

    const spawnedAt: number[] = []
    let downSeconds = 0
    const started = performance.now()
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const ackedBefore = acked.size
      const receivedBefore = receipts.total
      await until(
        `load and deliveries before kill ${cycle + 1}`,
        () => [acked.size - ackedBefore, receipts.total - receivedBefore],
        ([a, r]) => a! >= 300 && r! >= 150,
        60_000,
        10,
      )
      await sleep(Math.random() * 200) // a kill at no particular moment
      const killedAt = performance.now()
      sluice.child.kill('SIGKILL')
      assert.equal(await exitWithin(sluice, CHILD_STOP_MS), 'SIGKILL')
      await sleep(50) // whatever the old process sent has been read by the receiver
      spawnedAt.push(performance.now())
      sluice = await spawnSluice(env)
      downSeconds += (performance.now() - killedAt) / 1000
    }
    // Load continues on the last process for a moment, then stops.
    const ackedAtLastStart = acked.size
    await until(
      'load on the last process',
      () => acked.size - ackedAtLastStart,
      (n) => n >= 300,
      60_000,
      10,
    )
    stop = true
    await Promise.all(workers)
    const loadSeconds = (performance.now() - started) / 1000

    // Every acknowledged message arrives (claims held by a killed process return after the lease).
    await until(
      `all ${acked.size} acknowledged messages at the receiver`,
      () => [...acked].filter((id) => !receipts.has(id)).length,
      (missing) => missing === 0,
      60_000,
      50,
    )
    const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    try {
      await until(
        'every delivery to be final',
        async () => [
          await store.countDeliveries({ status: 'pending' }),
          await store.countDeliveries({ status: 'retrying' }),
        ],
        ([pending, retrying]) => pending === 0 && retrying === 0,
        60_000,
        50,
      )
      assert.equal(await store.countDeliveries({ status: 'failed' }), 0)
      const stored = await store.countMessages(source.id)
      assert.equal(await store.countDeliveries({ status: 'delivered' }), stored)
      assert.ok(stored >= acked.size, `${stored} stored, ${acked.size} acknowledged`)
      // The receiver always answers 200 in time, so every recorded delivery has exactly one attempt, a
      // success: each earlier receipt of a duplicated message was a success no process recorded.
      for (const delivery of await store.listDeliveries(destinationId, { limit: stored + 1 })) {
        assert.deepEqual(
          delivery.attempts.map((attempt) => attempt.statusCode),
          [200],
          `delivery of ${delivery.messageId}: ${JSON.stringify(delivery.attempts)}`,
        )
      }
    } finally {
      await store.close()
    }
    await sleep(200) // nothing more is on its way
    sluice.child.kill('SIGTERM')
    assert.equal(await exitWithin(sluice, CHILD_STOP_MS), 0, sluice.output())

    // Duplicates: each extra receipt must be separated from the previous one by a restart.
    const perKill = new Array<number>(CYCLES).fill(0)
    const unexplained: string[] = []
    for (const [messageId, times] of receipts.receipts) {
      for (let i = 1; i < times.length; i++) {
        const kill = spawnedAt.findIndex((at) => times[i - 1]! < at && at <= times[i]!)
        if (kill === -1) unexplained.push(messageId)
        else perKill[kill]!++
      }
    }
    const lost = [...acked].filter((id) => !receipts.has(id)).length
    const unacknowledged =
      receipts.receipts.size - [...receipts.receipts.keys()].filter((id) => acked.has(id)).length
    const duplicates = receipts.duplicates()
    t.diagnostic(
      `crash under load: ${CYCLES} SIGKILL/restart cycles in ${loadSeconds.toFixed(1)} s; ` +
        `${attempts} batch requests (${refused} refused while down); acked ${acked.size} messages ` +
        `(${Math.round(acked.size / (loadSeconds - downSeconds))}/s while up, ${downSeconds.toFixed(1)} s down in all); delivered ${acked.size - lost} of them, lost ${lost}; ` +
        `${unacknowledged} more delivered whose 200 was cut by a kill; duplicates ${duplicates} ` +
        `(per kill: ${perKill.join(', ')}; bound ${PER_KILL_BOUND} each)`,
    )
    assert.equal(lost, 0, 'acknowledged messages were lost')
    assert.deepEqual(unexplained.slice(0, 10), [], 'a message was sent twice with no kill in between')
    perKill.forEach((count, kill) => {
      assert.ok(
        count <= PER_KILL_BOUND,
        `kill ${kill + 1} left ${count} duplicates; at most ${PER_KILL_BOUND} can be unrecorded`,
      )
    })
  } finally {
    stop = true
    if (sluice && sluice.child.exitCode === null && sluice.child.signalCode === null)
      sluice.child.kill('SIGKILL')
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})

/** How the process exited, or a failure if it has not within `ms`. */
async function exitWithin(sluice: SluiceProcess, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`sluice did not exit within ${ms} ms:\n${sluice.output()}`)),
      ms,
    )
  })
  try {
    return await Promise.race([sluice.exited, late])
  } finally {
    clearTimeout(timer)
  }
}
