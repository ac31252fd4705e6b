import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { Analytics } from '../src/index.ts'
import { startServer, type TestServer } from './helpers/server.ts'

describe('gzip', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  test('gzip: true sends Content-Encoding: gzip bodies that inflate to the batch', async () => {
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, gzip: true })
    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      ids.push(
        analytics.track({
          userId: 'u1',
          event: 'Order Completed',
          properties: { i, note: 'é✓🎉'.repeat(20) },
        }),
      )
    }
    await analytics.close()
    const [request] = server.requests
    assert.equal(request!.headers['content-encoding'], 'gzip')
    assert.deepEqual([...request!.raw.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic number')
    const inflated = gunzipSync(request!.raw)
    assert.ok(
      request!.raw.length < inflated.length / 3,
      `${request!.raw.length} bytes for ${inflated.length}`,
    )
    const body = JSON.parse(inflated.toString('utf8'))
    assert.deepEqual(
      body.batch.map((message: { messageId: string }) => message.messageId),
      ids,
    )
    assert.equal(body.batch[3].properties.note, 'é✓🎉'.repeat(20))
  })

  test('gzip is off by default', async () => {
    server.requests.length = 0
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    analytics.track({ userId: 'u1', event: 'E' })
    await analytics.close()
    assert.equal(server.requests[0]!.headers['content-encoding'], undefined)
  })
})
