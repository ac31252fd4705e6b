/**
 * SIGTERM under load, on a real `sluice start` child process: it stops accepting, answers the
 * requests in flight (each 200 still means committed), finishes the deliveries in flight and records
 * their outcomes, hands back claimed deliveries it had not sent, and exits 0. Afterwards no delivery
 * holds a lease, and a restart delivers every acknowledged call exactly once.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { spawnSluice } from '../helpers/process.ts'
import { startTestSluice } from '../helpers/sluice.ts'
import { trackCall } from '../helpers/tracking.ts'
import { startCountingReceiver } from '../postgres/harness.ts'
import { until } from '../reliability/helpers.ts'

const ADMIN_TOKEN = 'shutdown-test-token-0123456789'
const CLIENTS = 4
const CALLS_PER_REQUEST = 20
/** SIGTERM comes once this many calls were acknowledged, so it lands in the middle of the load. */
const ACKED_BEFORE_SIGTERM = 1_000

test('SIGTERM under load loses nothing and leaves no lease held', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-shutdown-'))
  // A slow receiver keeps deliveries in flight and a backlog claimed when the signal comes.
  const receiver = await startCountingReceiver(10)
  const env = {
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    SLUICE_DELIVERY_CONCURRENCY: '8',
  }
  try {
    const first = await spawnSluice(env)
    const api = async (path: string, body: unknown) => {
      const response = await fetch(first.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      assert.equal(response.status, 201, await response.clone().text())
      return (await response.json()) as { id: string; writeKey: string }
    }
    const source = await api('/api/v1/sources', { name: 'Under load' })
    await api('/api/v1/destinations', {
      name: 'Slow hooks',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: receiver.url }] },
    })

    const acked = new Set<string>()
    let refusedOrClosed = 0
    let next = 0
    const client = async () => {
      for (;;) {
        const ids = Array.from({ length: CALLS_PER_REQUEST }, () => `sigterm-${next++}`)
        const body = JSON.stringify({ batch: ids.map((messageId) => trackCall({ messageId })) })
        try {
          const response = await fetch(`${first.url}/v1/batch`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
            },
            body,
          })
          await response.arrayBuffer()
          if (response.status === 200) for (const id of ids) acked.add(id)
          else if (response.status === 503) refusedOrClosed++
          else assert.fail(`unexpected status ${response.status}`)
        } catch {
          return // the listener is closed: the process is going away
        }
        if (refusedOrClosed > 0) return
      }
    }
    const load = Array.from({ length: CLIENTS }, client)
    await until(
      'load to be under way',
      () => acked.size,
      (n) => n >= ACKED_BEFORE_SIGTERM,
      60_000,
    )
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0, `exit status; output:\n${first.output()}`)
    await Promise.all(load)
    const ackedAtExit = acked.size

    const db = new DatabaseSync(join(dataDir, 'sluice.db'), { readOnly: true })
    try {
      const stored = new Set(
        (db.prepare('SELECT message_id FROM messages').all() as { message_id: string }[]).map(
          (row) => row.message_id,
        ),
      )
      const lost = [...acked].filter((id) => !stored.has(id))
      assert.deepEqual(lost.slice(0, 10), [], `${lost.length} acknowledged calls are not stored`)
      const leased = db
        .prepare(
          "SELECT COUNT(*) AS n FROM deliveries WHERE lease_until IS NOT NULL AND status IN ('pending', 'retrying')",
        )
        .get() as { n: number }
      assert.equal(
        leased.n,
        0,
        `no delivery holds a lease after a graceful shutdown: ${JSON.stringify(db.prepare('SELECT id, status, attempt_count, lease_until, updated_at, next_attempt_at FROM deliveries WHERE lease_until IS NOT NULL').all())}\n${first.output()}`,
      )
      const waiting = db
        .prepare("SELECT COUNT(*) AS n FROM deliveries WHERE status IN ('pending', 'retrying')")
        .get() as { n: number }
      assert.ok(waiting.n > 0, 'the signal came with a backlog left (the test covers handing it back)')
    } finally {
      db.close()
    }

    // A restart delivers the rest: every acknowledged call exactly once, none twice.
    const second = await spawnSluice(env)
    try {
      await until(
        'every acknowledged call to reach the receiver',
        () => [...acked].filter((id) => !receiver.seen.has(id)).length,
        (missing) => missing === 0,
        120_000,
        100,
      )
      const twice = [...receiver.seen].filter(([, count]) => count > 1)
      assert.deepEqual(twice.slice(0, 10), [], `${twice.length} calls were delivered more than once`)
      assert.equal(acked.size, ackedAtExit)
    } finally {
      second.child.kill('SIGTERM')
      assert.equal(await second.exited, 0)
    }
  } finally {
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})

/** Reads HTTP/1.1 responses off a raw socket until `count` status lines have arrived. */
function statusLines(socket: Socket, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let text = ''
    const check = () => {
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))
      if (statuses.length >= count) resolve(statuses)
    }
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      check()
    })
    socket.on('error', reject)
    socket.on('close', () => {
      check()
      reject(new Error(`the connection closed after:\n${text}`))
    })
  })
}

const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1')
    probe.on('connect', () => {
      probe.destroy()
      resolve(false)
    })
    probe.on('error', () => resolve(true))
  })

test('once shutdown begins /readyz answers 503, while a request in flight is still answered and committed', async () => {
  const sluice = await startTestSluice()
  const source = await sluice.createSource('Draining')
  const port = Number(new URL(sluice.url).port)
  const call = JSON.stringify({ batch: [trackCall({ messageId: 'in-flight-at-sigterm' })] })
  const auth = Buffer.from(`${source.writeKey}:`).toString('base64')
  // A request whose body is only half sent when shutdown begins keeps its connection busy.
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  const responses = statusLines(socket, 2)
  socket.write(
    `POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(call)}\r\n\r\n`,
  )
  socket.write(call.slice(0, 10))
  try {
    const before = await fetch(`${sluice.url}/readyz`)
    assert.equal(before.status, 200, await before.text())

    const closed = sluice.close()
    await until('the listener to close', () => refusesConnections(port), Boolean, 30_000)
    // The rest of the body, and a readiness probe pipelined behind it on the same connection.
    socket.write(`${call.slice(10)}GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    assert.deepEqual(await responses, [200, 503])
    await closed
  } finally {
    socket.destroy()
    await sluice.close()
  }

  const db = new DatabaseSync(join(sluice.dataDir, 'sluice.db'), { readOnly: true })
  try {
    const stored = db.prepare('SELECT message_id FROM messages').all() as { message_id: string }[]
    assert.deepEqual(
      stored.map((row) => row.message_id),
      ['in-flight-at-sigterm'],
      'the call answered 200 during shutdown was committed',
    )
  } finally {
    db.close()
    await rm(sluice.dataDir, { recursive: true, force: true })
  }
})
