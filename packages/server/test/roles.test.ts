import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { eventually, sleep, startReceiver } from './deliver/receivers.ts'
import { runCli, spawnSluice } from './helpers/process.ts'
import { send } from './helpers/tracking.ts'

test('--role api accepts without delivering; --role worker delivers and serves only health', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-roles-'))
  const receiver = await startReceiver()
  const env = {
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: 'roles-admin-token-0123456789',
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
  }
  try {
    const source = JSON.parse((await runCli(['sources', 'create', 'roles', '--json'], env)).stdout) as {
      id: string
      writeKey: string
    }
    const api = await spawnSluice({ ...env, SLUICE_ROLE: 'api' })
    const created = await fetch(`${api.url}/api/v1/destinations`, {
      method: 'POST',
      headers: { authorization: 'Bearer roles-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'r',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
      }),
    })
    assert.equal(created.status, 201)
    const batch = Array.from({ length: 20 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId: `r-${i}`,
    }))
    assert.equal((await send(api.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
    await sleep(1_500)
    assert.equal(receiver.requests.length, 0, 'an api process does not deliver')

    const worker = await spawnSluice({ ...env, SLUICE_ROLE: 'worker' })
    assert.match(worker.output(), /worker is delivering/)
    assert.ok(
      await eventually(() => receiver.requests.length === 20, 10_000),
      `${receiver.requests.length} delivered`,
    )
    const ready = await fetch(`${worker.url}/readyz`)
    assert.deepEqual(await ready.json(), { ok: true, store: 'sqlite', role: 'worker' })
    assert.equal((await fetch(`${worker.url}/v1/track`, { method: 'POST', body: '{}' })).status, 404)
    assert.equal((await fetch(`${worker.url}/api/v1/sources`)).status, 404)

    for (const child of [api, worker]) {
      child.child.kill('SIGTERM')
      assert.equal(await child.exited, 0)
    }
  } finally {
    await receiver.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})

test('an unknown role stops start-up with a clear message', async () => {
  const result = await runCli(['start', '--role', 'both'], { SLUICE_DATA_DIR: tmpdir() })
  assert.equal(result.code, 1)
  assert.match(result.stderr, /SLUICE_ROLE: expected api, worker or all, got "both"/)
})
