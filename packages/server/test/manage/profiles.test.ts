// The profiles API on a real server: calls sent through the Tracking API reach profiles through the
// profile worker, and the management API reads them by identity, by id (also an old, merged id) and
// pages their calls. Bad queries get a 400 that says what to send.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

describe('profiles API', () => {
  let sluice: TestSluice
  let writeKey: string

  before(async () => {
    sluice = await startTestSluice()
    writeKey = (await sluice.createSource()).writeKey
  })
  after(() => sluice.destroy())

  const track = (body: Record<string, unknown>) =>
    send(sluice.url, '/v1/batch', { batch: [body] }, { writeKey })
  const profileOf = (query: string) =>
    until(
      `the profile of ${query}`,
      () => sluice.api('GET', `/api/v1/profiles?${query}`),
      (response) => response.status === 200,
    )

  test('a visitor who signs up: one profile with both ids, traits, and the calls newest first', async () => {
    await track({
      type: 'page',
      anonymousId: 'visitor-1',
      name: 'Home',
      timestamp: '2026-01-01T10:00:00.000Z',
    })
    await track({
      type: 'identify',
      userId: 'ada',
      anonymousId: 'visitor-1',
      traits: { email: 'ada@example.com', plan: 'free' },
      timestamp: '2026-01-01T10:05:00.000Z',
    })
    await track({ type: 'track', userId: 'ada', event: 'Order Completed', properties: { total: 30 } })
    // All three calls in the profile (they are consumed a moment after their 200).
    const found = await profileOf('userId=ada')
    await until(
      'the three calls',
      async () => (await sluice.api('GET', `/api/v1/profiles/${found.body.id}/events`)).body.events.length,
      (count) => count === 3,
    )
    const { body: profile } = await sluice.api('GET', '/api/v1/profiles?userId=ada')
    assert.deepEqual(profile.userIds, ['ada'])
    assert.deepEqual(profile.anonymousIds, ['visitor-1'])
    assert.deepEqual(profile.traits, { email: 'ada@example.com', plan: 'free' })
    assert.deepEqual(profile.computedTraits, {})
    assert.deepEqual(profile.audiences, [])
    assert.equal(profile.firstSeenAt, '2026-01-01T10:00:00.000Z')
    assert.deepEqual((await sluice.api('GET', `/api/v1/profiles/${profile.id}`)).body, profile)
    assert.deepEqual((await sluice.api('GET', '/api/v1/profiles?anonymousId=visitor-1')).body, profile)

    const events = await sluice.api('GET', `/api/v1/profiles/${profile.id}/events?limit=2`)
    assert.deepEqual(
      events.body.events.map((event: { type: string }) => event.type),
      ['track', 'identify'],
    )
    assert.equal(events.body.events[0].event, 'Order Completed')
    assert.deepEqual(events.body.events[0].properties, { total: 30 })
    const rest = await sluice.api(
      'GET',
      `/api/v1/profiles/${profile.id}/events?before=${events.body.nextCursor}`,
    )
    assert.deepEqual(
      rest.body.events.map((event: { type: string }) => event.type),
      ['page'],
    )
    // A page call's name is kept with its properties, as browser SDKs send it, so it shows what it was.
    assert.deepEqual(rest.body.events[0].properties, { name: 'Home' })
    assert.equal(rest.body.events[0].event, null, 'event names track calls only (computations match on it)')
    assert.equal(rest.body.nextCursor, null)
  })

  test('after an alias, the old profile id answers with the merged profile', async () => {
    await track({ type: 'track', anonymousId: 'old-device', event: 'Viewed' })
    const old = await profileOf('anonymousId=old-device')
    await track({ type: 'track', userId: 'grace', event: 'Viewed' })
    await profileOf('userId=grace')
    await track({ type: 'alias', previousId: 'old-device', userId: 'grace' })
    const merged = await until(
      'the merge',
      () => sluice.api('GET', `/api/v1/profiles/${old.body.id}`),
      (response) => response.body.userIds?.includes('grace'),
    )
    assert.notEqual(merged.body.id, old.body.id)
    assert.deepEqual(merged.body.anonymousIds, ['old-device'])
  })

  test('unknown profiles are 404; a lookup needs exactly one identity', async () => {
    const missing = await sluice.api('GET', '/api/v1/profiles/prf_nope')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'profile_not_found')
    assert.equal((await sluice.api('GET', '/api/v1/profiles?userId=nobody')).status, 404)
    for (const query of ['', '?userId=a&anonymousId=b']) {
      const response = await sluice.api('GET', `/api/v1/profiles${query}`)
      assert.equal(response.status, 400, query)
      assert.match(response.body.error.message, /exactly one of userId or anonymousId/)
    }
    const badLimit = await sluice.api('GET', '/api/v1/profiles/prf_x/events?limit=0')
    assert.equal(badLimit.status, 400)
    assert.equal((await sluice.api('GET', '/api/v1/profiles/prf_nope/events')).status, 404)
  })
})
