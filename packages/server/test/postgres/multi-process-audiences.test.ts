// Audiences with several Sluice processes on one PostgreSQL: two `all` processes (each with its own
// profile worker) share the profile cursor and the evaluation queue. Calls go to both; every member
// gets exactly one `true` identify, and no identify is enqueued twice. Real child processes, a real
// receiver, the real PostgreSQL.

import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { fetchText } from '../helpers/http.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { freshDatabase } from '../store/pg.ts'
import { runCli, type SluiceChild, startRole, stopChild } from './harness.ts'

const ADMIN = 'mp-audiences-admin-token-0123456789'
const USERS = 300
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Identify {
  userId: string
  messageId: string
  traits: Record<string, unknown>
}

/** A webhook receiver keeping every identify body it gets. */
async function startIdentifyReceiver(): Promise<{ url: string; bodies: Identify[]; close(): Promise<void> }> {
  const bodies: Identify[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString()) as Identify)
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function api(baseUrl: string, path: string, body: unknown): Promise<{ id: string }> {
  const response = await fetchText(`${baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const { text } = response
  assert.equal(response.status, 201, text)
  return JSON.parse(text) as { id: string }
}

async function poll(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(200)
  }
  return check()
}

describe('audiences with two processes on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let dataDir: string
  let receiver: Awaited<ReturnType<typeof startIdentifyReceiver>>
  let processes: SluiceChild[] = []
  let db: pg.Client
  let writeKey: string

  before(async () => {
    database = await freshDatabase()
    dataDir = await mkdtemp(join(tmpdir(), 'sluice-mp-audiences-'))
    receiver = await startIdentifyReceiver()
    const env = {
      DATABASE_URL: database.url,
      SLUICE_SECRET_KEY: TEST_SECRET_KEY,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: ADMIN,
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    }
    writeKey = (JSON.parse(await runCli(['sources', 'create', 'web', '--json'], env)) as { writeKey: string })
      .writeKey
    processes = await Promise.all([startRole('all', env), startRole('all', env)])
    db = new pg.Client({ connectionString: database.url })
    await db.connect()
  })

  after(async () => {
    await db?.end().catch(() => {})
    await Promise.all(processes.map((child) => stopChild(child).catch(() => {})))
    await receiver?.close()
    await database?.drop()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  test('calls to both processes: every member gets exactly one true, nobody else anything', async () => {
    const [first, second] = processes.map((child) => child.url) as [string, string]
    const destination = await api(first, '/destinations', {
      name: 'audience receiver',
      type: 'webhooks',
      sourceIds: [],
      settings: { webhooks: [{ url: receiver.url }] },
    })
    await api(second, '/audiences', {
      name: 'Buyers',
      definition: { event: 'Order Completed' },
      destinationIds: [destination.id],
    })
    // Every batch goes to both processes: each buyer orders twice, once through each; visitors only view.
    const calls = Array.from({ length: USERS }, (_, i) => [
      { type: 'track', userId: `buyer-${i}`, event: 'Order Completed', properties: { total: i } },
      { type: 'track', userId: `buyer-${i}`, event: 'Viewed' },
      { type: 'track', userId: `visitor-${i}`, event: 'Viewed' },
    ]).flat()
    const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
    for (let offset = 0; offset < calls.length; offset += 30) {
      const batch = calls.slice(offset, offset + 30)
      await Promise.all(
        [first, second].map(async (url) => {
          const response = await fetchText(`${url}/v1/batch`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ batch }),
          })
          assert.equal(response.status, 200, response.text)
        }),
      )
    }
    const members = () => new Set(receiver.bodies.map((body) => body.userId)).size
    assert.ok(await poll(() => members() >= USERS, 120_000), `${members()} of ${USERS} members received`)
    // Both processes have evaluated everything: the queue is empty and every identify delivered.
    const settled = async () => {
      const { rows } = await db.query<{ queued: string; identifies: string }>(
        `SELECT (SELECT count(*) FROM profile_dirty) AS queued,
                (SELECT count(*) FROM messages WHERE source_id = 'src_sluice_computed') AS identifies`,
      )
      return Number(rows[0]!.queued) === 0 && Number(rows[0]!.identifies) === receiver.bodies.length
    }
    assert.ok(await poll(settled, 60_000), 'the queue drains and every identify is received')

    const byUser = new Map<string, Set<string>>()
    for (const body of receiver.bodies) {
      assert.deepEqual(body.traits, { buyers: true }, `${body.userId} gets true`)
      assert.match(body.userId, /^buyer-/, 'visitors are not members')
      byUser.set(body.userId, (byUser.get(body.userId) ?? new Set()).add(body.messageId))
    }
    assert.equal(byUser.size, USERS)
    for (const [userId, messageIds] of byUser) assert.equal(messageIds.size, 1, `${userId}: one identify`)
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM messages WHERE source_id = 'src_sluice_computed'`,
    )
    assert.equal(Number(rows[0]!.n), USERS, 'one identify enqueued per member')
  })
})
