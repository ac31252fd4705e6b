/**
 * kill -9 right after a deletion's `201`: everything it promised was committed with it. After a
 * restart the delete notification still goes out, the user's cancelled call never does, the erasure
 * completes and the suppression holds.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { eventually, startReceiver } from '../deliver/receivers.ts'
import { runCli, spawnSluice } from '../helpers/process.ts'
import { send, trackCall } from '../helpers/tracking.ts'

test('kill -9 right after the 201: the delete still arrives, the cancelled call never does', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-privacy-crash-'))
  const state = { status: 503 }
  const received: { type: string; userId: string; status: number }[] = []
  const receiver = await startReceiver((_req, res, body) => {
    const { type, userId } = JSON.parse(body.toString()) as { type: string; userId: string }
    received.push({ type, userId, status: state.status })
    res.writeHead(state.status).end()
  })
  const env = {
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: 'crash-token-0123456789abcd',
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // A delivery in flight at the kill comes back soon, and retries follow quickly.
    SLUICE_DELIVERY_LEASE_MS: '1500',
    SLUICE_REQUEST_TIMEOUT_MS: '1000',
    SLUICE_RETRY_BASE_DELAY_MS: '100',
    SLUICE_RETRY_MAX_DELAY_MS: '500',
  }
  const api = (url: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: 'Bearer crash-token-0123456789abcd', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  try {
    const source = JSON.parse((await runCli(['sources', 'create', 'crash', '--json'], env)).stdout) as {
      id: string
      writeKey: string
    }
    let sluice = await spawnSluice(env)
    const destination = await api(sluice.url, 'POST', '/destinations', {
      name: 'receiver',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
    })
    assert.equal(destination.status, 201, await destination.text())
    const sent = await send(sluice.url, '/v1/track', trackCall({ userId: 'gone' }), {
      writeKey: source.writeKey,
    })
    assert.equal(sent.status, 200)
    // The call is attempted, refused (503) and waits for its retry.
    assert.ok(await eventually(() => received.length >= 1, 15_000), 'the call was attempted')

    const created = await api(sluice.url, 'POST', '/regulations', {
      regulationType: 'SUPPRESS_WITH_DELETE',
      subjectIds: ['gone'],
    })
    assert.equal(created.status, 201)
    sluice.child.kill('SIGKILL')
    assert.equal(await sluice.exited, 'SIGKILL')
    const { id } = (await created.json()) as { id: string }
    const beforeRestart = received.length

    state.status = 200
    sluice = await spawnSluice(env)
    try {
      assert.ok(
        await eventually(() => received.some((r) => r.type === 'delete' && r.status === 200), 20_000),
        `the delete arrived after the restart: ${JSON.stringify(received)}`,
      )
      let regulation: { status: string; erased: { messages: number } } | undefined
      assert.ok(
        await eventually(() => {
          void api(sluice.url, 'GET', `/regulations/${id}`)
            .then((r) => r.json())
            .then((body) => {
              regulation = body as typeof regulation
            })
          return regulation?.status === 'FINISHED'
        }, 20_000),
        `the regulation finished: ${JSON.stringify(regulation)}`,
      )
      assert.equal(regulation?.erased.messages, 1)
      assert.deepEqual(
        received.slice(beforeRestart).filter((r) => r.type !== 'delete'),
        [],
        "the user's cancelled call was never sent again",
      )
      // The suppression survived too: a new call of the user is acknowledged and dropped.
      const later = await send(sluice.url, '/v1/track', trackCall({ userId: 'gone', messageId: 'later' }), {
        writeKey: source.writeKey,
      })
      assert.equal(later.status, 200)
      const stats = (await (await api(sluice.url, 'GET', `/sources/${source.id}`)).json()) as {
        stats: { suppressed: number }
      }
      assert.equal(stats.stats.suppressed, 1)
    } finally {
      sluice.child.kill('SIGTERM')
      await sluice.exited
    }
  } finally {
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
