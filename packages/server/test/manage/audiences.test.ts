// Audiences end to end on a real server: calls through the Tracking API, an audience created over that
// history through the management API, what a real receiver gets (one signed `true` per member, trait
// key snake_cased), entering and leaving through later calls, preview, status and size, the 400s that
// point at the node at fault, and the `sluice audiences` CLI on the same data.
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { opensslHmacSha1, type Receiver } from '../deliver/receivers.ts'
import { runCli } from '../helpers/process.ts'
import type { TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { type SyncFixture, startSyncFixture } from './sync-fixture.ts'

const SECRET = 'audience-secret'

describe('audiences API', () => {
  let fixture: SyncFixture
  let sluice: TestSluice
  let receiver: Receiver
  let destinationId: string

  before(async () => {
    fixture = await startSyncFixture({ name: 'Ads', path: '/ads', secret: SECRET })
    ;({ sluice, receiver, destinationId } = fixture)
  })
  after(() => fixture.close())

  const batch = (calls: Record<string, unknown>[]) => fixture.batch(calls)
  const order = (userId: string, total: number) => ({
    type: 'track',
    userId,
    event: 'Order Completed',
    properties: { total },
  })
  const bodies = () => fixture.bodies()
  const definition = { event: 'Order Completed', where: [{ property: 'total', op: '>=', value: 100 }] }

  test('created over existing users: one true per member; then entry, exit; preview, size, CLI', async () => {
    await batch([
      order('ada', 150),
      order('bob', 20),
      { type: 'track', anonymousId: 'visitor', event: 'Order Completed', properties: { total: 500 } },
    ])
    await until(
      'the calls in profiles',
      async () => (await sluice.api('GET', '/api/v1/profiles?anonymousId=visitor')).status,
      (status) => status === 200,
    )
    const preview = await sluice.api('POST', '/api/v1/audiences/preview', { definition })
    assert.equal(preview.status, 200)
    assert.equal(preview.body.size, 1)
    const ada = (await sluice.api('GET', '/api/v1/profiles?userId=ada')).body
    assert.deepEqual(preview.body.sample, [ada.id])
    assert.equal(
      (await sluice.api('POST', '/api/v1/audiences/preview', { definition, includeAnonymous: true })).body
        .size,
      2,
    )
    assert.equal(
      (await sluice.api('GET', '/api/v1/audiences')).body.audiences.length,
      0,
      'a preview saves nothing',
    )

    const created = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Big Spenders!',
      definition,
      destinationIds: [destinationId],
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.equal(created.body.key, 'big_spenders')
    await until(
      'one identify',
      () => receiver.requests.length,
      (n) => n >= 1,
    )
    const live = await until(
      'the audience goes live',
      async () => (await sluice.api('GET', `/api/v1/audiences/${created.body.id}`)).body,
      (body) => body.status === 'live',
    )
    assert.equal(live.size, 2, 'the anonymous visitor is a member, just not synced')
    assert.ok(live.lastSyncAt)
    assert.equal(receiver.requests.length, 1)
    const [first] = bodies()
    assert.deepEqual([first.type, first.userId, first.traits], ['identify', 'ada', { big_spenders: true }])
    assert.deepEqual(first.context.personas, {
      computation_class: 'audience',
      computation_id: created.body.id,
      computation_key: 'big_spenders',
    })
    assert.equal(
      receiver.requests[0]!.headers['x-signature'],
      opensslHmacSha1(receiver.requests[0]!.body, SECRET),
    )

    await batch([order('bob', 400)])
    await until(
      'bob enters',
      () => receiver.requests.length,
      (n) => n >= 2,
    )
    assert.deepEqual([bodies()[1].userId, bodies()[1].traits], ['bob', { big_spenders: true }])

    // The CLI reads the same data.
    const env = { SLUICE_DATA_DIR: sluice.dataDir }
    const listed = await runCli(['audiences', 'list'], env)
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, new RegExp(`${created.body.id}\\s+live\\s+3 members\\s+big_spenders`))
    const shown = await runCli(['audiences', 'show', created.body.id], env)
    assert.equal(JSON.parse(shown.stdout).key, 'big_spenders')
    const file = join(sluice.dataDir, 'definition.json')
    await writeFile(file, JSON.stringify(definition))
    const previewed = await runCli(['audiences', 'preview', file, '--json'], env)
    assert.equal(JSON.parse(previewed.stdout).size, 2, previewed.stderr)
    await writeFile(file, JSON.stringify({ all: [{ computedTrait: 'nope', op: '=', value: 1 }] }))
    const refused = await runCli(['audiences', 'preview', file], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /\/definition\/all\/0\/computedTrait: No computed trait has the key "nope"/)
  })

  test('invalid definitions get a 400 that says where in the tree the problem is', async () => {
    await sluice.api('POST', '/api/v1/audiences', { name: 'Base', definition: { event: 'Login' } })
    await sluice.api('POST', '/api/v1/audiences', { name: 'Derived', definition: { audience: 'base' } })
    const cases: [unknown, string, RegExp][] = [
      [
        { all: [{ event: 'A' }, { computedTrait: 'unknown_trait', op: '>=', value: 1 }] },
        '/definition/all/1/computedTrait',
        /No computed trait/,
      ],
      [{ any: [{ trait: 'plan', op: 'like', value: 'x' }] }, '/definition/any/0/op', /not an operator/],
      [{ not: { event: 'A', count: { op: '~', value: 1 } } }, '/definition/not/count/op', /count.op/],
      [{ event: 'A', withinDays: 100_000 }, '/definition/withinDays', /1 to 3650/],
      [{ audience: 'missing' }, '/definition/audience', /No audience has the key "missing"/],
      [{ all: [] }, '/definition/all', /non-empty list/],
      [{ event: 'A', trait: 'b' }, '/definition', /exactly one of/],
    ]
    for (const [tree, field, message] of cases) {
      const response = await sluice.api('POST', '/api/v1/audiences', { name: 'Bad', definition: tree })
      assert.equal(response.status, 400, JSON.stringify(tree))
      assert.equal(response.body.error.field, field, JSON.stringify(response.body))
      assert.match(response.body.error.message, message)
    }
    // An empty where property, which computed traits refuse too.
    const noProperty = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Bad',
      definition: { event: 'A', where: [{ property: '', op: 'exists' }] },
    })
    assert.equal(noProperty.status, 400)
    assert.equal(noProperty.body.error.field, '/definition/where/0/property')
    // A cycle made by an edit: "base" changed to include "derived", which includes "base".
    const base = (await sluice.api('GET', '/api/v1/audiences')).body.audiences.find(
      (audience: { key: string }) => audience.key === 'base',
    )
    const cycle = await sluice.api('PATCH', `/api/v1/audiences/${base.id}`, {
      definition: { any: [{ event: 'Login' }, { audience: 'derived' }] },
    })
    assert.equal(cycle.status, 400, JSON.stringify(cycle.body))
    assert.equal(cycle.body.error.field, '/definition/any/1/audience/audience')
    assert.match(cycle.body.error.message, /makes a cycle: base → derived → base/)
    const selfReference = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Loop',
      definition: { all: [{ audience: 'loop' }] },
    })
    assert.equal(selfReference.status, 400)
    assert.equal(selfReference.body.error.field, '/definition/all/0/audience')
    assert.match(selfReference.body.error.message, /cannot include itself/)
    const taken = await sluice.api('POST', '/api/v1/audiences', { name: 'base!', definition: { event: 'X' } })
    assert.equal(taken.status, 409)
    assert.equal((await sluice.api('GET', '/api/v1/audiences/aud_nope')).status, 404)
    const derived = (await sluice.api('GET', '/api/v1/audiences')).body.audiences.find(
      (audience: { key: string }) => audience.key === 'derived',
    )
    const renamed = await sluice.api('PATCH', `/api/v1/audiences/${derived.id}`, { name: 'Renamed' })
    assert.equal(renamed.body.key, 'derived')
  })
  test('PATCH: a new definition syncs only who changed; enabled false/true; a bad definition is a 400', async () => {
    const bought = (userId: string) => ({ type: 'track', userId, event: 'Plan Bought' })
    await batch([bought('pat'), bought('quinn'), bought('quinn')])
    const created = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Patched',
      definition: { event: 'Plan Bought' },
      destinationIds: [destinationId],
    })
    assert.equal(created.status, 201)
    const sentFor = () => bodies().filter((body) => 'patched' in body.traits)
    const who = () =>
      sentFor()
        .map((body) => `${body.userId}:${body.traits.patched}`)
        .sort()
    await until(
      'both members get true',
      async () => who(),
      (sent) => sent.length === 2,
      60_000,
    )
    assert.deepEqual(who(), ['pat:true', 'quinn:true'])
    const path = `/api/v1/audiences/${created.body.id}`
    const edited = await sluice.api('PATCH', path, {
      name: 'Patched (twice)',
      definition: { event: 'Plan Bought', count: { op: '>=', value: 2 } },
    })
    assert.equal(edited.status, 200)
    assert.equal(edited.body.key, 'patched')
    assert.deepEqual(edited.body.definition.count, { op: '>=', value: 2 })
    await until(
      'pat leaves',
      async () => who(),
      (sent) => sent.includes('pat:false'),
      60_000,
    )
    const live = await until(
      'live again',
      async () => (await sluice.api('GET', path)).body,
      (audience) => audience.status === 'live',
      60_000,
    )
    assert.equal(live.size, 1)
    assert.equal(live.error, null)
    assert.deepEqual(who(), ['pat:false', 'pat:true', 'quinn:true'], 'quinn is not sent again')

    const bad = await sluice.api('PATCH', path, { definition: { all: [{ event: 'X', count: { op: '~' } }] } })
    assert.equal(bad.status, 400)
    assert.match(bad.body.error.field, /^\/definition\/all\/0\/count/)

    const disabled = await sluice.api('PATCH', path, { enabled: false })
    assert.equal(disabled.body.status, 'disabled')
    const enabled = await sluice.api('PATCH', path, { enabled: true })
    assert.equal(enabled.body.status, 'computing')
    await until(
      'live again',
      async () => (await sluice.api('GET', path)).body,
      (audience) => audience.status === 'live',
      60_000,
    )
  })
})
