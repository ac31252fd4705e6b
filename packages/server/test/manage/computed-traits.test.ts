// Computed traits end to end on a real server: calls through the Tracking API, a trait created over
// that history through the management API, and the identify calls a real HTTP receiver gets (signed,
// one per identified profile, then one per change), the deliveries API listing them, and the 400s
// that say what is wrong with a definition.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { opensslHmacSha1, type Receiver } from '../deliver/receivers.ts'
import type { TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { type SyncFixture, startSyncFixture } from './sync-fixture.ts'

const SECRET = 'computed-secret'

describe('computed traits API', () => {
  let fixture: SyncFixture
  let sluice: TestSluice
  let receiver: Receiver
  let destinationId: string

  before(async () => {
    fixture = await startSyncFixture({ name: 'CRM', path: '/crm', secret: SECRET })
    ;({ sluice, receiver, destinationId } = fixture)
  })
  after(() => fixture.close())

  const batch = (calls: Record<string, unknown>[]) => fixture.batch(calls)
  const order = (who: Record<string, string>, total: number) => ({
    type: 'track',
    event: 'Order Completed',
    properties: { total },
    ...who,
  })
  const bodies = () => fixture.bodies()

  test('created over history: one signed identify per identified buyer, then one per change', async () => {
    await batch([
      order({ userId: 'ada' }, 30),
      order({ userId: 'ada' }, 12),
      order({ userId: 'bob' }, 5),
      order({ anonymousId: 'visitor' }, 99),
    ])
    // The history is in profiles before the trait exists.
    await until(
      "ada's two orders in her profile",
      async () => (await sluice.api('GET', '/api/v1/profiles?userId=ada')).body,
      (profile) => profile?.id !== undefined,
    )
    await until(
      'every call consumed',
      async () => (await sluice.api('GET', '/api/v1/profiles?anonymousId=visitor')).status,
      (status) => status === 200,
    )
    const created = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Lifetime Value (EUR)',
      kind: 'sum',
      event: 'Order Completed',
      property: 'total',
      destinationIds: [destinationId],
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.equal(created.body.key, 'lifetime_value_eur')
    assert.equal(created.headers.get('location'), `/api/v1/computed-traits/${created.body.id}`)

    await until(
      'two identify calls',
      () => receiver.requests.length,
      (n) => n >= 2,
    )
    const received = bodies()
      .map((body) => [body.userId, body.traits])
      .sort()
    assert.deepEqual(received, [
      ['ada', { lifetime_value_eur: 42 }],
      ['bob', { lifetime_value_eur: 5 }],
    ])
    const [first] = bodies()
    assert.equal(first.type, 'identify')
    assert.equal(first.version, 1)
    assert.deepEqual(first.context.personas, {
      computation_class: 'computed_trait',
      computation_id: created.body.id,
      computation_key: 'lifetime_value_eur',
    })
    assert.equal(
      receiver.requests[0]!.headers['x-signature'],
      opensslHmacSha1(receiver.requests[0]!.body, SECRET),
    )
    await until(
      'the trait goes live',
      async () => (await sluice.api('GET', `/api/v1/computed-traits/${created.body.id}`)).body.status,
      (status) => status === 'live',
    )

    await batch([order({ userId: 'bob' }, 10), { type: 'track', userId: 'ada', event: 'Viewed' }])
    await until(
      'bob’s new value',
      () => receiver.requests.length,
      (n) => n >= 3,
    )
    assert.deepEqual(bodies()[2].traits, { lifetime_value_eur: 15 })
    assert.equal(bodies()[2].userId, 'bob')
    const profile = await sluice.api('GET', '/api/v1/profiles?anonymousId=visitor')
    assert.deepEqual(profile.body.computedTraits, { lifetime_value_eur: 99 }, 'anonymous: computed, not sent')

    const deliveries = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)
    assert.equal(deliveries.body.deliveries.length, 3)
    assert.ok(deliveries.body.deliveries.every((d: { status: string }) => d.status === 'delivered'))
    const listed = await sluice.api('GET', '/api/v1/computed-traits')
    assert.deepEqual(
      listed.body.computedTraits.map((t: { key: string }) => t.key),
      ['lifetime_value_eur'],
    )
    const sources = await sluice.api('GET', '/api/v1/sources')
    assert.equal(sources.body.sources.length, 1, 'the sync messages’ own source stays hidden')
  })

  test('definitions that cannot work get a 400 naming the field; a taken key a 409', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ name: 'Avg', kind: 'avg', event: 'E' }, '/property', /reads a property/],
      [
        { name: 'N', kind: 'count', event: 'E', destinationIds: ['dst_nope'] },
        '/destinationIds/0',
        /No destination/,
      ],
      [
        { name: 'N', kind: 'count', event: 'E', where: [{ property: 'p', op: 'in', value: 'x' }] },
        '/where/0/value',
        /list/,
      ],
      [
        { name: 'N', kind: 'count', event: 'E', where: [{ property: 'p', op: '=' }] },
        '/where/0/value',
        /value/,
      ],
      [{ name: '!!!', kind: 'count', event: 'E' }, '/name', /letter or digit/],
    ]
    for (const [body, field, message] of cases) {
      const response = await sluice.api('POST', '/api/v1/computed-traits', body)
      assert.equal(response.status, 400, JSON.stringify(body))
      assert.equal(response.body.error.field, field, JSON.stringify(response.body))
      assert.match(response.body.error.message, message)
    }
    const badOp = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'N',
      kind: 'count',
      event: 'E',
      where: [{ property: 'p', op: 'like', value: 1 }],
    })
    assert.equal(badOp.status, 400)
    assert.match(badOp.body.error.message, /op/)
    await sluice.api('POST', '/api/v1/computed-traits', { name: 'Order Count', kind: 'count', event: 'E' })
    const taken = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'order count!',
      kind: 'count',
      event: 'F',
    })
    assert.equal(taken.status, 409)
    assert.match(taken.body.error.message, /order_count/)
    assert.equal((await sluice.api('GET', '/api/v1/computed-traits/ctr_nope')).status, 404)
  })

  test('rename keeps the key; delete removes it', async () => {
    const created = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Visits',
      kind: 'count',
      event: 'Visit',
    })
    const renamed = await sluice.api('PATCH', `/api/v1/computed-traits/${created.body.id}`, {
      name: 'Site Visits',
    })
    assert.equal(renamed.status, 200)
    assert.equal(renamed.body.name, 'Site Visits')
    assert.equal(renamed.body.key, 'visits')
    assert.equal((await sluice.api('DELETE', `/api/v1/computed-traits/${created.body.id}`)).status, 204)
    assert.equal((await sluice.api('GET', `/api/v1/computed-traits/${created.body.id}`)).status, 404)
  })
  test('PATCH: a new definition is computed over history; a bad one is a 400; disable and enable', async () => {
    const created = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Spend',
      kind: 'sum',
      event: 'Order Completed',
      property: 'total',
      destinationIds: [destinationId],
    })
    assert.equal(created.status, 201)
    const path = `/api/v1/computed-traits/${created.body.id}`
    const live = () =>
      until(
        'live',
        async () => (await sluice.api('GET', path)).body,
        (trait) => trait.status === 'live',
        60_000,
      )
    await live()
    const edited = await sluice.api('PATCH', path, { kind: 'max', withinDays: 30 })
    assert.equal(edited.status, 200)
    assert.equal(edited.body.kind, 'max')
    assert.equal(edited.body.property, 'total')
    assert.equal(edited.body.withinDays, 30)
    assert.equal((await live()).error, null)
    const cleared = await sluice.api('PATCH', path, { withinDays: null })
    assert.equal(cleared.body.withinDays, null)

    const noProperty = await sluice.api('PATCH', path, { property: null })
    assert.equal(noProperty.status, 400)
    assert.equal(noProperty.body.error.field, '/property')
    const badWhere = await sluice.api('PATCH', path, { where: [{ property: 'total', op: 'in', value: 3 }] })
    assert.equal(badWhere.status, 400)
    assert.equal(badWhere.body.error.field, '/where/0/value')

    assert.equal((await sluice.api('PATCH', path, { enabled: false })).body.status, 'disabled')
    assert.equal((await sluice.api('GET', path)).body.status, 'disabled')
    assert.equal((await sluice.api('PATCH', path, { enabled: true })).body.status, 'computing')
    await live()
  })

  test('a trait reading `constructor` is live with no value, and holds up no trait created after it', async () => {
    await batch([{ type: 'track', userId: 'r1', event: 'Ctor Event' }])
    await until(
      "r1's profile",
      async () => (await sluice.api('GET', '/api/v1/profiles?userId=r1')).status,
      (status) => status === 200,
    )
    const ctor = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Last Ctor',
      kind: 'last',
      event: 'Ctor Event',
      property: 'constructor',
    })
    assert.equal(ctor.status, 201, JSON.stringify(ctor.body))
    const later = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Ctor Events',
      kind: 'count',
      event: 'Ctor Event',
    })
    assert.equal(later.status, 201, JSON.stringify(later.body))
    for (const id of [ctor.body.id, later.body.id]) {
      await until(
        `trait ${id} live`,
        async () => (await sluice.api('GET', `/api/v1/computed-traits/${id}`)).body,
        (trait) => trait.status === 'live' && trait.error === null,
      )
    }
    await until(
      "r1's count",
      async () => (await sluice.api('GET', '/api/v1/profiles?userId=r1')).body.computedTraits,
      (traits) => traits.ctor_events === 1 && !('last_ctor' in traits),
    )
  })
})
