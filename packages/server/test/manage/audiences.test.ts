// Audiences end to end on a real server: calls through the Tracking API, an audience created over that
// history through the management API, what a real receiver gets (one signed `true` per member, trait
// key snake_cased), entering and leaving through later calls, preview, status and size, the 400s that
// point at the node at fault, and the `sluice audiences` CLI on the same data.
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { opensslHmacSha1, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { runCli } from '../helpers/process.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

const SECRET = 'audience-secret'

describe('audiences API', () => {
  let sluice: TestSluice
  let receiver: Receiver
  let writeKey: string
  let destinationId: string

  before(async () => {
    sluice = await startTestSluice()
    receiver = await startReceiver()
    writeKey = (await sluice.createSource()).writeKey
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Ads',
      type: 'webhooks',
      sourceIds: [],
      settings: { webhooks: [{ url: `${receiver.url}/ads` }], sharedSecret: SECRET },
    })
    destinationId = created.body.id
  })
  after(async () => {
    await sluice.destroy()
    await receiver.close()
  })

  const batch = (calls: Record<string, unknown>[]) =>
    send(sluice.url, '/v1/batch', { batch: calls }, { writeKey })
  const order = (userId: string, total: number) => ({
    type: 'track',
    userId,
    event: 'Order Completed',
    properties: { total },
  })
  const bodies = () => receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')))
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
    // Definitions never change and may only refer to audiences that exist, so the one cycle an API
    // request can make is an audience referring to itself.
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
})
