/**
 * Configuration as code end to end, on SQLite and on PostgreSQL: export, plan, apply, prune,
 * placeholders and secrets, atomic failure, duplicate names, roles, the published schema.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { opensslHmacSha1, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { rawRequest, trackCall, writeKeyAuth } from './helpers.ts'

type Backend = 'sqlite' | 'postgres'

/** A Sluice on the backend, with its own empty database; `destroy` removes both. */
async function startOn(backend: Backend): Promise<TestSluice> {
  if (backend === 'sqlite') return startTestSluice()
  const database = await freshDatabase()
  const sluice = await startTestSluice({ databaseUrl: database.url })
  return {
    ...sluice,
    async destroy() {
      await sluice.destroy()
      await database.drop()
    },
  }
}

async function ok<T = any>(sluice: TestSluice, method: string, path: string, body?: unknown): Promise<T> {
  const response = await sluice.api(method, path, body)
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`)
  return response.body as T
}

/** Builds a configuration through the ordinary API: two sources, a destination, a trait, an audience. */
async function seed(sluice: TestSluice, receiverUrl: string) {
  const web = await ok(sluice, 'POST', '/api/v1/sources', { name: 'Web app' })
  const backend = await ok(sluice, 'POST', '/api/v1/sources', { name: 'Backend', enabled: false })
  const destination = await ok(sluice, 'POST', '/api/v1/destinations', {
    name: 'Orders hook',
    type: 'webhooks',
    sourceIds: [web.id, backend.id],
    settings: {
      webhooks: [{ url: `${receiverUrl}/orders`, headers: { Authorization: 'Bearer abc' } }],
      sharedSecret: 'hook-secret-1',
    },
  })
  await ok(sluice, 'POST', '/api/v1/computed-traits', {
    name: 'Orders Count',
    kind: 'count',
    event: 'Order Completed',
    destinationIds: [destination.id],
  })
  await ok(sluice, 'POST', '/api/v1/audiences', {
    name: 'Frequent Buyers',
    definition: { computedTrait: 'orders_count', op: '>=', value: 2 },
    destinationIds: [destination.id],
  })
  return { web, backend, destination }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`configuration as code on ${backend}`, () => {
    let receiver: Receiver
    before(async () => {
      receiver = await startReceiver()
    })
    after(() => receiver.close())

    test('the export is keyed by names, sorted, stable, with secrets as placeholders', async () => {
      const sluice = await startOn(backend)
      try {
        const { web } = await seed(sluice, receiver.url)
        const first = await sluice.api('GET', '/api/v1/config')
        assert.equal(first.status, 200)
        const second = await sluice.api('GET', '/api/v1/config')
        assert.equal(JSON.stringify(second.body), JSON.stringify(first.body), 'two exports are the same text')
        const document = first.body
        assert.deepEqual(Object.keys(document), [
          'version',
          'sources',
          'destinations',
          'computedTraits',
          'audiences',
        ])
        assert.equal(document.version, 1)
        assert.deepEqual(Object.keys(document.sources), ['Backend', 'Web app'], 'sorted by name')
        assert.deepEqual(document.sources['Web app'], {
          enabled: true,
          writeKey: { $secret: 'sources/Web app/writeKey' },
        })
        assert.deepEqual(document.destinations['Orders hook'], {
          type: 'webhooks',
          enabled: true,
          sources: ['Backend', 'Web app'],
          settings: {
            webhooks: [{ url: `${receiver.url}/orders`, headers: { Authorization: 'Bearer abc' } }],
            sharedSecret: { $secret: 'destinations/Orders hook/sharedSecret' },
          },
        })
        assert.deepEqual(document.computedTraits['Orders Count'], {
          key: 'orders_count',
          enabled: true,
          kind: 'count',
          event: 'Order Completed',
          where: [],
          destinations: ['Orders hook'],
        })
        assert.equal(document.audiences['Frequent Buyers'].key, 'frequent_buyers')
        assert.ok(!first.headers.get('content-type')?.includes('html'))
        assert.ok(!JSON.stringify(document).includes(web.writeKey), 'no write key without secrets=include')
        assert.ok(!JSON.stringify(document).includes('hook-secret-1'), 'no shared secret')

        const withSecrets = await sluice.api('GET', '/api/v1/config?secrets=include')
        assert.equal(withSecrets.body.sources['Web app'].writeKey, web.writeKey)
        assert.equal(withSecrets.body.destinations['Orders hook'].settings.sharedSecret, 'hook-secret-1')

        // The export is valid against the published schema (what editors check files with).
        const schema = await fetch(`${sluice.url}/api/config.schema.json`)
        assert.equal(schema.status, 200)
        const validate = new Ajv2020({ strict: false }).compile((await schema.json()) as object)
        assert.ok(validate(document), JSON.stringify(validate.errors))
        assert.ok(validate(withSecrets.body), JSON.stringify(validate.errors))
        assert.equal(validate({ version: 1, sources: { ' padded ': {} } }), false)
        const withEnvironment: any = structuredClone(document)
        withEnvironment.destinations['Orders hook'].settings.webhooks[0].headers.Authorization = {
          $env: 'HOOK_TOKEN',
        }
        withEnvironment.destinations['Orders hook'].settings.sharedSecret = { $env: 'HOOK_SECRET' }
        assert.ok(validate(withEnvironment), JSON.stringify(validate.errors))
      } finally {
        await sluice.destroy()
      }
    })

    test('plan and apply round trip to an empty Sluice; calls then flow the same; twice plans nothing', async () => {
      const source = await startOn(backend)
      const target = await startOn(backend)
      try {
        const { web } = await seed(source, receiver.url)
        const document = await ok(source, 'GET', '/api/v1/config?secrets=include')

        const plan = await ok(target, 'POST', '/api/v1/config/plan', document)
        assert.deepEqual(
          plan.changes.map((change: any) => `${change.action} ${change.section} ${change.name}`),
          [
            'create sources Backend',
            'create sources Web app',
            'create destinations Orders hook',
            'create computedTraits Orders Count',
            'create audiences Frequent Buyers',
          ],
        )
        assert.ok(!JSON.stringify(plan).includes('hook-secret-1'), 'a plan never shows a secret')
        assert.deepEqual((await ok(target, 'GET', '/api/v1/sources')).sources, [], 'a plan changes nothing')

        const applied = await ok(target, 'POST', '/api/v1/config/apply', document)
        assert.deepEqual(applied.changes, plan.changes, 'apply answers the plan it made')
        assert.deepEqual((await ok(target, 'POST', '/api/v1/config/plan', document)).changes, [])
        assert.deepEqual((await ok(target, 'POST', '/api/v1/config/apply', document)).changes, [])
        assert.deepEqual(await ok(target, 'GET', '/api/v1/config?secrets=include'), document)

        // A call with the same write key reaches the same URL, signed with the same secret.
        receiver.requests.length = 0
        const sent = await rawRequest(target.url, 'POST', '/v1/track', {
          authorization: writeKeyAuth(web.writeKey),
          body: trackCall(),
        })
        assert.equal(sent.status, 200)
        await until(
          'the delivery',
          async () => receiver.requests.length,
          (n) => n >= 1,
          15_000,
        )
        const [request] = receiver.requests
        assert.equal(request!.url, '/orders')
        assert.equal(request!.headers.authorization, 'Bearer abc')
        assert.equal(request!.headers['x-signature'], opensslHmacSha1(request!.body, 'hook-secret-1'))
        const profileWorkerSees = await ok(target, 'GET', '/api/v1/audiences')
        assert.equal(profileWorkerSees.audiences[0].key, 'frequent_buyers')
      } finally {
        await source.destroy()
        await target.destroy()
      }
    })

    test('updates list the fields that differ; placeholders keep secrets; deletes only with prune', async () => {
      const sluice = await startOn(backend)
      try {
        await seed(sluice, receiver.url)
        const document = await ok(sluice, 'GET', '/api/v1/config')
        assert.deepEqual(
          (await ok(sluice, 'POST', '/api/v1/config/plan', document)).changes,
          [],
          'placeholders keep',
        )

        const hook = document.destinations['Orders hook']
        hook.enabled = false
        hook.settings.webhooks = [{ url: `${receiver.url}/v2` }]
        hook.sources = ['Web app']
        document.sources['Web app'].enabled = false
        delete document.audiences['Frequent Buyers']
        delete document.sources.Backend
        const plan = await ok(sluice, 'POST', '/api/v1/config/plan', document)
        assert.deepEqual(plan.changes, [
          {
            action: 'update',
            section: 'sources',
            name: 'Web app',
            fields: [{ field: '/enabled', from: true, to: false }],
          },
          {
            action: 'update',
            section: 'destinations',
            name: 'Orders hook',
            fields: [
              { field: '/enabled', from: true, to: false },
              { field: '/sources', from: ['Backend', 'Web app'], to: ['Web app'] },
              {
                field: '/settings/webhooks',
                from: [{ url: `${receiver.url}/orders`, headers: { Authorization: 'Bearer abc' } }],
                to: [{ url: `${receiver.url}/v2`, headers: {} }],
              },
            ],
          },
        ])
        await ok(sluice, 'POST', '/api/v1/config/apply', document)
        const after = await ok(sluice, 'GET', '/api/v1/config?secrets=include')
        assert.equal(after.destinations['Orders hook'].settings.sharedSecret, 'hook-secret-1', 'secret kept')
        assert.equal(after.destinations['Orders hook'].enabled, false)
        assert.ok(after.sources.Backend, 'not deleted without prune')
        assert.ok(after.audiences['Frequent Buyers'])

        const pruned = await ok(sluice, 'POST', '/api/v1/config/apply', { ...document, prune: true })
        assert.deepEqual(
          pruned.changes.map((change: any) => `${change.action} ${change.section} ${change.name}`),
          ['delete sources Backend', 'delete audiences Frequent Buyers'],
        )
        const left = await ok(sluice, 'GET', '/api/v1/config')
        assert.deepEqual(Object.keys(left.sources), ['Web app'])
        assert.deepEqual(left.audiences, {})
        assert.deepEqual(
          (await ok(sluice, 'POST', '/api/v1/config/plan', { ...document, prune: true })).changes,
          [],
        )

        // A removed secret: the document leaves it out.
        delete document.destinations['Orders hook'].settings.sharedSecret
        const removal = await ok(sluice, 'POST', '/api/v1/config/apply', document)
        assert.deepEqual(removal.changes[0].fields, [
          {
            field: '/settings/sharedSecret',
            from: { $secret: 'destinations/Orders hook/sharedSecret' },
            to: null,
          },
        ])
        const destination = (await ok(sluice, 'GET', '/api/v1/destinations')).destinations[0]
        assert.equal(destination.settings.sharedSecretSet, false, 'the secret is gone, and says so')
      } finally {
        await sluice.destroy()
      }
    })

    test('computed traits and audiences: definitions, destinations and switches change as through the API', async () => {
      const sluice = await startOn(backend)
      try {
        await seed(sluice, receiver.url)
        const document = await ok(sluice, 'GET', '/api/v1/config')
        const trait = document.computedTraits['Orders Count']
        trait.event = 'Order Placed'
        trait.withinDays = 30
        const audience = document.audiences['Frequent Buyers']
        audience.enabled = false
        audience.includeAnonymous = true
        audience.destinations = []
        const plan = await ok(sluice, 'POST', '/api/v1/config/plan', document)
        assert.deepEqual(
          plan.changes.map((change: any) => [change.name, change.fields.map((field: any) => field.field)]),
          [
            ['Orders Count', ['/event', '/withinDays']],
            ['Frequent Buyers', ['/enabled', '/includeAnonymous', '/destinations']],
          ],
        )
        await ok(sluice, 'POST', '/api/v1/config/apply', document)
        const [storedTrait] = (await ok(sluice, 'GET', '/api/v1/computed-traits')).computedTraits
        assert.equal(storedTrait.event, 'Order Placed')
        assert.equal(storedTrait.withinDays, 30)
        assert.equal(storedTrait.key, 'orders_count', 'the key stays')
        const [storedAudience] = (await ok(sluice, 'GET', '/api/v1/audiences')).audiences
        assert.equal(storedAudience.status, 'disabled')
        assert.equal(storedAudience.includeAnonymous, true)
        assert.deepEqual(storedAudience.destinationIds, [])
        assert.deepEqual((await ok(sluice, 'POST', '/api/v1/config/plan', document)).changes, [])

        audience.enabled = true
        await ok(sluice, 'POST', '/api/v1/config/apply', document)
        const [enabledAgain] = (await ok(sluice, 'GET', '/api/v1/audiences')).audiences
        assert.notEqual(enabledAgain.status, 'disabled')
      } finally {
        await sluice.destroy()
      }
    })

    test('an invalid document: 400 with a pointer per problem, and nothing applied', async () => {
      const sluice = await startOn(backend)
      try {
        const document = {
          version: 1,
          sources: { 'New source': {} },
          destinations: {
            Good: { sources: ['New source'], settings: { webhooks: [{ url: `${receiver.url}/ok` }] } },
            Bad: { sources: ['Nowhere'], settings: { webhooks: [{ url: 'ftp://example.com' }] } },
          },
          computedTraits: { Broken: { kind: 'sum', event: 'Order Completed' } },
          audiences: { Loop: { definition: { audience: 'loop' } } },
        }
        for (const route of ['plan', 'apply']) {
          const answer = await sluice.api('POST', `/api/v1/config/${route}`, document)
          assert.equal(answer.status, 400, JSON.stringify(answer.body))
          assert.equal(answer.body.error.code, 'invalid_document')
          assert.deepEqual(
            answer.body.error.problems.map((problem: any) => problem.field),
            [
              '/destinations/Bad/settings/webhooks/0/url',
              '/destinations/Bad/sources/0',
              '/computedTraits/Broken/property',
              '/audiences/Loop/definition/audience',
            ],
          )
          assert.match(answer.body.error.message, /Nothing was applied/)
        }
        assert.deepEqual(await ok(sluice, 'GET', '/api/v1/config'), {
          version: 1,
          sources: {},
          destinations: {},
          computedTraits: {},
          audiences: {},
        })

        const server = await sluice.api('POST', '/api/v1/config/plan', {
          version: 1,
          sources: { Web: { writeKey: { $env: 'WEB_KEY' } } },
        })
        assert.equal(server.status, 400)
        assert.equal(server.body.error.problems[0].field, '/sources/Web/writeKey')
        assert.match(server.body.error.problems[0].message, /sluice CLI/)

        const noSecret = await sluice.api('POST', '/api/v1/config/plan', {
          version: 1,
          destinations: {
            New: {
              settings: {
                webhooks: [{ url: `${receiver.url}/x` }],
                sharedSecret: { $secret: 'destinations/New/sharedSecret' },
              },
            },
          },
        })
        assert.equal(noSecret.status, 400)
        assert.equal(noSecret.body.error.problems[0].field, '/destinations/New/settings/sharedSecret')

        const version = await sluice.api('POST', '/api/v1/config/plan', { version: 2, extra: true })
        assert.deepEqual(
          version.body.error.problems.map((problem: any) => problem.field),
          ['/extra', '/version'],
        )
      } finally {
        await sluice.destroy()
      }
    })

    test('the store applies everything in one transaction: a write that fails undoes the others', async () => {
      const sluice = await startOn(backend)
      try {
        const result = await sluice.store.applyConfig({
          sources: {
            create: [{ name: 'Made then undone', enabled: true, writeKey: null }],
            update: [],
            delete: [],
          },
          destinations: {
            create: [
              {
                name: 'Also undone',
                type: 'webhooks',
                enabled: true,
                sources: [{ created: 'Made then undone' }],
                settings: { webhooks: [{ url: 'https://example.com/x', headers: {} }], sharedSecret: null },
              },
            ],
            update: [{ id: 'dst_gone', enabled: false }],
            delete: [],
          },
          computedTraits: { create: [], update: [], delete: [] },
          audiences: { create: [], update: [], delete: [] },
        })
        assert.deepEqual(result, {
          applied: false,
          reason: 'Could not update destination dst_gone: it changed while the configuration was applied.',
        })
        assert.deepEqual(await sluice.store.listSources(), [])
        assert.deepEqual(await sluice.store.listDestinations(), [])
      } finally {
        await sluice.destroy()
      }
    })

    test('applies sent at once are made one after the other: each object is created once', async () => {
      const sluice = await startOn(backend)
      try {
        const document = { version: 1, sources: { Once: {} }, destinations: {} }
        const answers = await Promise.all(
          [1, 2, 3, 4].map(() => sluice.api('POST', '/api/v1/config/apply', document)),
        )
        assert.deepEqual(
          answers.map((answer) => answer.status),
          [200, 200, 200, 200],
        )
        assert.equal(answers.flatMap((answer) => answer.body.changes).length, 1)
        assert.equal((await sluice.store.listSources()).length, 1)
      } finally {
        await sluice.destroy()
      }
    })

    test('duplicate names are refused with their ids; viewers export placeholders only', async () => {
      const sluice = await startOn(backend)
      try {
        const first = await ok(sluice, 'POST', '/api/v1/sources', { name: 'Twin' })
        const second = await ok(sluice, 'POST', '/api/v1/sources', { name: 'Twin' })
        const refused = await sluice.api('GET', '/api/v1/config')
        assert.equal(refused.status, 409)
        assert.equal(refused.body.error.code, 'duplicate_names')
        assert.ok(
          refused.body.error.message.includes(first.id) && refused.body.error.message.includes(second.id),
        )
        assert.equal((await sluice.api('POST', '/api/v1/config/plan', { version: 1 })).status, 409)
        await ok(sluice, 'PATCH', `/api/v1/sources/${second.id}`, { name: 'Twin 2' })

        const created = await ok(sluice, 'POST', '/api/v1/tokens', { name: 'Reader', role: 'viewer' })
        const viewer = { authorization: `Bearer ${created.token}` }
        const read = await rawRequest(sluice.url, 'GET', '/api/v1/config', viewer)
        assert.equal(read.status, 200)
        assert.deepEqual(read.body.sources.Twin.writeKey, { $secret: 'sources/Twin/writeKey' })
        assert.ok(!read.text.includes(first.writeKey))
        const secrets = await rawRequest(sluice.url, 'GET', '/api/v1/config?secrets=include', viewer)
        assert.equal(secrets.status, 403)
        assert.ok(!secrets.text.includes(first.writeKey))
        const plan = await rawRequest(sluice.url, 'POST', '/api/v1/config/plan', {
          ...viewer,
          body: { version: 1 },
        })
        assert.equal(plan.status, 403)
        const admin = await sluice.api('GET', '/api/v1/config?secrets=include')
        assert.equal(admin.body.sources.Twin.writeKey, first.writeKey)

        // Webhook URLs' secret parts and static header values are masked for viewers, as everywhere.
        await ok(sluice, 'POST', '/api/v1/destinations', {
          name: 'Keyed',
          type: 'webhooks',
          settings: {
            webhooks: [{ url: 'https://example.com/in?token=tok-123', headers: { 'X-Api-Key': 'key-456' } }],
          },
        })
        const masked = await rawRequest(sluice.url, 'GET', '/api/v1/config', viewer)
        assert.ok(!masked.text.includes('tok-123') && !masked.text.includes('key-456'), masked.text)
        const [webhook] = masked.body.destinations.Keyed.settings.webhooks
        assert.match(webhook.url, /^https:\/\/example\.com\/in\?token=\S+$/)
        const asAdmin = await sluice.api('GET', '/api/v1/config')
        assert.equal(asAdmin.body.destinations.Keyed.settings.webhooks[0].headers['X-Api-Key'], 'key-456')
        // A viewer's export applied by an admin would replace real values with masks: refused.
        const refusedApply = await sluice.api('POST', '/api/v1/config/apply', masked.body)
        assert.equal(refusedApply.status, 400)
        assert.deepEqual(
          refusedApply.body.error.problems.map((problem: any) => problem.field),
          [
            '/destinations/Keyed/settings/webhooks/0/url',
            '/destinations/Keyed/settings/webhooks/0/headers/X-Api-Key',
          ],
        )
        assert.deepEqual((await sluice.api('POST', '/api/v1/config/plan', asAdmin.body)).body.changes, [])
      } finally {
        await sluice.destroy()
      }
    })
  })
}

describe('configuration as code across processes sharing PostgreSQL', () => {
  test('applies sent to two processes at once create each object once; the later is told to plan again', async () => {
    const database = await freshDatabase()
    const first = await startTestSluice({ databaseUrl: database.url })
    const second = await startTestSluice({ databaseUrl: database.url })
    try {
      const document = {
        version: 1,
        sources: { Shared: {} },
        destinations: {
          Everywhere: { sources: ['Shared'], settings: { webhooks: [{ url: 'https://example.com/e' }] } },
        },
      }
      const answers = await Promise.all(
        [first, second, first, second].map((sluice) => sluice.api('POST', '/api/v1/config/apply', document)),
      )
      for (const answer of answers) {
        assert.ok(answer.status === 200 || answer.status === 409, JSON.stringify(answer.body))
        if (answer.status === 409) assert.match(answer.body.error.message, /plan again/)
      }
      assert.equal((await first.store.listSources()).length, 1)
      assert.equal((await first.store.listDestinations()).length, 1)
      assert.deepEqual((await ok(second, 'POST', '/api/v1/config/plan', document)).changes, [])
    } finally {
      await first.close()
      await second.close()
      await database.drop()
    }
  })
})
