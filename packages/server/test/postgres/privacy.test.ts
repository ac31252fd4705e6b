// Privacy with two Sluice processes on one PostgreSQL: a regulation created through one process is
// honoured by the other (its suppression filter hears of it), the delete goes out once although both
// processes deliver, and the erasure is done once although both run the erasure runner.

import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { fetchText } from '../helpers/http.ts'
import { TEST_SECRET_KEY } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { freshDatabase } from '../store/pg.ts'
import { runCli, type SluiceChild, startRole, stopChild } from './harness.ts'

const ADMIN = 'pg-privacy-token-0123456789'

/** Polls until `done`; generous, since it returns as soon as the condition holds. */
async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

let database: Awaited<ReturnType<typeof freshDatabase>>
let dataDir: string
let receiver: Receiver
const processes: SluiceChild[] = []

before(async () => {
  database = await freshDatabase()
  dataDir = await mkdtemp(join(tmpdir(), 'sluice-pg-privacy-'))
  receiver = await startReceiver()
})

after(async () => {
  await Promise.all(processes.map((child) => stopChild(child).catch(() => {})))
  await receiver?.close()
  await database?.drop()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

test('a suppression made through one process is honoured by the other; delete sent and data erased once', async (t) => {
  const env = {
    DATABASE_URL: database.url,
    SLUICE_SECRET_KEY: TEST_SECRET_KEY,
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: ADMIN,
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
  }
  const source = JSON.parse(await runCli(['sources', 'create', 'pg', '--json'], env)) as {
    id: string
    writeKey: string
  }
  // Each kept as soon as it started, so that `after` stops it even if the other fails to start.
  const [first, second] = (await Promise.all(
    [startRole('all', env), startRole('all', env)].map((starting) =>
      starting.then((child) => {
        processes.push(child)
        return child
      }),
    ),
  )) as [SluiceChild, SluiceChild]
  const api = async (url: string, method: string, path: string, body?: unknown) => {
    const response = await fetchText(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, body: JSON.parse(response.text) as any }
  }
  const destination = await api(first.url, 'POST', '/destinations', {
    name: 'receiver',
    type: 'webhooks',
    sourceIds: [source.id],
    settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
  })
  assert.equal(destination.status, 201)
  const bodies = () => receiver.requests.map((r) => JSON.parse(r.body.toString()))

  const call = (url: string, messageId: string) =>
    send(url, '/v1/track', trackCall({ userId: 'pg-user', messageId }), { writeKey: source.writeKey })
  assert.equal((await call(second.url, 'before')).status, 200)
  await until(
    'the first call is delivered',
    async () => bodies().length,
    (n) => n === 1,
  )

  const created = await api(first.url, 'POST', '/regulations', {
    regulationType: 'SUPPRESS_WITH_DELETE',
    subjectIds: ['pg-user'],
  })
  assert.equal(created.status, 201)

  // The other process hears of the suppression (NOTIFY, or its periodic reload): probe until a call
  // through it is dropped, then every later call through it is dropped too.
  let probes = 0
  const regulatedAt = performance.now()
  await until(
    'the second process to suppress the user',
    async () => {
      assert.equal((await call(second.url, `probe-${probes++}`)).status, 200)
      return (await api(second.url, 'GET', `/sources/${source.id}`)).body.stats.suppressed as number
    },
    (suppressed) => suppressed >= 1,
  )
  t.diagnostic(
    `the second process suppressed the user ${Math.round(performance.now() - regulatedAt)} ms after the request (${probes} probes)`,
  )
  for (let i = 0; i < 5; i++) assert.equal((await call(second.url, `after-${i}`)).status, 200)
  const stats = (await api(second.url, 'GET', `/sources/${source.id}`)).body.stats
  assert.equal(stats.suppressed, 6, 'the probe that was dropped and the five after it')

  const done = await until(
    'the regulation to finish',
    async () => (await api(second.url, 'GET', `/regulations/${created.body.id}`)).body,
    (r) => r.status === 'FINISHED',
  )
  assert.equal(done.erased.messages, 1, 'the call before the request, erased once')
  const deletes = bodies().filter((b) => b.type === 'delete')
  assert.deepEqual(deletes, [{ type: 'delete', userId: 'pg-user', timestamp: created.body.createdAt }])
  assert.equal(
    bodies().filter((b) => String(b.messageId).startsWith('after-')).length,
    0,
    'no suppressed call was delivered',
  )
  const suppressions = (await api(second.url, 'GET', '/suppressions')).body.suppressions
  assert.deepEqual(
    suppressions.map((s: { userId: string; sourceId: string | null }) => [s.userId, s.sourceId]),
    [['pg-user', null]],
  )
})
