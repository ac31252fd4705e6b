import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import { test } from 'node:test'
import { startTestSluice } from '../helpers/sluice.ts'
import { destinationBody, rawRequest, trackCall, writeKeyAuth } from './helpers.ts'

test('a restart on the same data dir keeps sources, destinations and the shared secret', async () => {
  const first = await startTestSluice()
  const dataDir = first.dataDir
  try {
    const source = (await first.api('POST', '/api/v1/sources', { name: 'Durable' })).body
    const rotated = (await first.api('POST', `/api/v1/sources/${source.id}/rotate-write-key`)).body
    // Saving answers with `warnings`; reading does not.
    const { warnings: _warnings, ...destination } = (
      await first.api(
        'POST',
        '/api/v1/destinations',
        destinationBody([source.id], {
          webhooks: [{ url: 'https://hooks.example.com/durable', headers: { 'X-Env': 'prod' } }],
          sharedSecret: 'durable-secret',
        }),
      )
    ).body
    await first.close()

    const second = await startTestSluice({ dataDir })
    try {
      assert.deepEqual((await second.api('GET', `/api/v1/sources/${source.id}`)).body, rotated)
      assert.deepEqual((await second.api('GET', `/api/v1/destinations/${destination.id}`)).body, destination)
      assert.equal(
        (await second.store.getDestination(destination.id))?.settings.sharedSecret,
        'durable-secret',
      )

      const oldKey = await rawRequest(second.url, 'POST', '/v1/track', {
        authorization: writeKeyAuth(source.writeKey),
        body: trackCall(),
      })
      assert.equal(oldKey.status, 401, 'a rotated-away key stays dead after a restart')
      const newKey = await rawRequest(second.url, 'POST', '/v1/track', {
        authorization: writeKeyAuth(rotated.writeKey),
        body: trackCall(),
      })
      assert.equal(newKey.status, 200)
    } finally {
      await second.close()
    }
  } finally {
    await first.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
