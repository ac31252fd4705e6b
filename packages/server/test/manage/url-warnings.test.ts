import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'

describe('saving a webhook URL Sluice will refuse to dial', () => {
  let sluice: TestSluice
  let sourceId = ''

  before(async () => {
    sluice = await startTestSluice({ allowPrivateDestinations: false })
    sourceId = (await sluice.createSource('Warned')).id
  })
  after(() => sluice.destroy())

  const body = (urls: string[]) => ({
    name: 'Hooks',
    type: 'webhooks',
    sourceIds: [sourceId],
    settings: { webhooks: urls.map((url) => ({ url })) },
  })

  test('is saved, with a warning per refused URL naming its field', async () => {
    const created = await sluice.api(
      'POST',
      '/api/v1/destinations',
      body(['http://93.184.216.34/ok', 'http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data']),
    )
    assert.equal(created.status, 201)
    assert.deepEqual(
      created.body.warnings.map((warning: { field: string }) => warning.field),
      ['/settings/webhooks/1/url', '/settings/webhooks/2/url'],
    )
    assert.match(created.body.warnings[0].message, /loopback/)
    assert.match(created.body.warnings[0].message, /SLUICE_ALLOW_PRIVATE_DESTINATIONS/)

    const fixed = await sluice.api('PATCH', `/api/v1/destinations/${created.body.id}`, {
      settings: { webhooks: [{ url: 'http://93.184.216.34/ok' }] },
    })
    assert.equal(fixed.status, 200)
    assert.deepEqual(fixed.body.warnings, [])
  })

  test('no warnings when private destinations are allowed', async () => {
    const relaxed = await startTestSluice({ allowPrivateDestinations: true })
    try {
      const source = await relaxed.createSource('Local')
      const created = await relaxed.api('POST', '/api/v1/destinations', {
        ...body(['http://127.0.0.1:9/hook']),
        sourceIds: [source.id],
      })
      assert.equal(created.status, 201)
      assert.deepEqual(created.body.warnings, [])
    } finally {
      await relaxed.destroy()
    }
  })
})
