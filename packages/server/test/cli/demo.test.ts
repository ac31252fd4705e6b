/**
 * `sluice demo`: six calls, one per type, arrive at its receiver with verified signatures, both with
 * its own in-process Sluice and against a running one.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEMO_CALLS, runDemo } from '../../src/cli/demo.ts'
import { startTestSluice } from '../helpers/sluice.ts'

const TYPES = ['alias', 'group', 'identify', 'page', 'screen', 'track']

test('sluice demo delivers one call of every type, each with a verified signature', async () => {
  const lines: string[] = []
  const result = await runDemo({ log: (line) => lines.push(line) })

  assert.equal(result.ok, true)
  assert.deepEqual(result.arrivals.map((a) => a.type).sort(), TYPES)
  for (const arrival of result.arrivals) {
    assert.equal(arrival.signatureVerified, true, arrival.type)
    assert.equal(arrival.headers['user-agent'], 'Sluice/1.0')
    assert.equal(arrival.body.messageId, arrival.messageId)
  }
  const alias = result.arrivals.find((a) => a.type === 'alias')!
  assert.equal(alias.body['Previous ID'], 'anon-7f3a')
  assert.equal(alias.body.userId, undefined)

  assert.equal(result.deliveries.length, DEMO_CALLS.length)
  assert.ok(result.deliveries.every((d) => d.status === 'delivered' && d.statusCode === 200))
  assert.equal(result.stats.delivered, 6)

  const output = lines.join('\n')
  for (const arrival of result.arrivals) {
    assert.match(output, new RegExp(`${arrival.type} +${arrival.messageId}  signature ✓`))
  }
  assert.match(output, /Counters: delivered 6/)
  assert.match(output, /All 6 calls arrived, each with a valid signature\./)
})

test('sluice demo against a running Sluice cleans up what it created', async () => {
  const sluice = await startTestSluice()
  try {
    const result = await runDemo({ baseUrl: `${sluice.url}/`, adminToken: sluice.adminToken, log: () => {} })
    assert.equal(result.ok, true)
    assert.equal(result.arrivals.length, 6)
    assert.deepEqual((await sluice.api('GET', '/api/v1/sources')).body.sources, [])
    assert.deepEqual((await sluice.api('GET', '/api/v1/destinations')).body.destinations, [])
  } finally {
    await sluice.destroy()
  }
})

test('sluice demo refuses a base URL without its admin token', async () => {
  await assert.rejects(runDemo({ baseUrl: 'http://127.0.0.1:1', log: () => {} }), /needs the admin token/)
})

test('sluice demo explains why calls did not arrive', async () => {
  // A Sluice that refuses loopback destinations: every delivery is refused as SSRF.
  const sluice = await startTestSluice({ allowPrivateDestinations: false })
  try {
    await assert.rejects(
      runDemo({ baseUrl: sluice.url, adminToken: sluice.adminToken, timeoutMs: 1_000, log: () => {} }),
      (error: Error) => {
        assert.match(error.message, /Only 0 of 6 calls reached the receiver within 1 s; missing: identify/)
        assert.match(error.message, /ssrf/)
        assert.match(error.message, /SLUICE_ALLOW_PRIVATE_DESTINATIONS=true/)
        return true
      },
    )
  } finally {
    await sluice.destroy()
  }
})
