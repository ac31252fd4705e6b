// Hostile and careless input to the management API, on a real server: audience definitions nested
// or sized to exhaust the stack, numeric query parameters that are not plain numbers, oversized ids.
// Each answer is a 400 that names the limit and how to fix it, and the server keeps answering.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  MAX_DEFINITION_DEPTH,
  MAX_DEFINITION_NODES,
  MAX_WHERE_CONDITIONS,
} from '../../src/domain/definition-limits.ts'
import { MAX_ID_LENGTH } from '../../src/ingest/limits.ts'
import { attemptResultView, urlForViewer } from '../../src/manage/views.ts'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { destinationBody, rawRequest, writeKeyAuth } from './helpers.ts'

const LEAF = { trait: 'plan', op: '=', value: 'pro' }

/** `{"not": {"not": … LEAF}}` with `levels` levels of nodes in all (the leaf is one). */
function nots(levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = LEAF
  for (let level = 1; level < levels; level++) node = { not: node }
  return node
}

/** The same as `JSON.stringify({name?, definition: nots(levels)})`, which runs out of stack for thousands of levels. */
function deepBody(levels: number, name?: string): string {
  const definition = `${'{"not":'.repeat(levels - 1)}${JSON.stringify(LEAF)}${'}'.repeat(levels - 1)}`
  return `{${name === undefined ? '' : `"name":${JSON.stringify(name)},`}"definition":${definition}}`
}

/** Calls `request` and fails if no answer comes within `ms`: the hang the limits prevent. */
async function answersWithin<T>(ms: number, label: string, request: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${label}: no answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([request(), timeout])
  } finally {
    clearTimeout(timer)
  }
}

describe('audience definition limits', () => {
  let sluice: TestSluice

  before(async () => {
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  const routes = (definition: unknown) => [
    { method: 'POST', path: '/api/v1/audiences', body: { name: 'Deep', definition } },
    { method: 'POST', path: '/api/v1/audiences/preview', body: { definition } },
  ]

  test('a definition nested thousands of levels deep is refused with a 400; the server goes on', async () => {
    const created = await sluice.api('POST', '/api/v1/audiences', { name: 'Shallow', definition: LEAF })
    assert.equal(created.status, 201)
    for (const levels of [2_000, 4_500, 5_000]) {
      for (const [method, path, body] of [
        ['POST', '/api/v1/audiences', deepBody(levels, 'Deep')],
        ['POST', '/api/v1/audiences/preview', deepBody(levels)],
        ['PATCH', `/api/v1/audiences/${created.body.id}`, deepBody(levels)],
      ] as const) {
        const label = `${method} ${path} at ${levels} levels`
        const response = await answersWithin(10_000, label, async () => {
          const answer = await fetch(sluice.url + path, {
            method,
            headers: { authorization: `Bearer ${sluice.adminToken}`, 'content-type': 'application/json' },
            body,
          })
          return { status: answer.status, body: (await answer.json()) as { error: { message: string } } }
        })
        assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body)}`)
        assert.match(response.body.error.message, /nested more than 100 levels deep/, label)
      }
    }
    const list = await answersWithin(10_000, 'GET /audiences', () => sluice.api('GET', '/api/v1/audiences'))
    assert.deepEqual(
      list.body.audiences.map((audience: { definition: unknown }) => audience.definition),
      [LEAF],
    )
    assert.equal((await sluice.api('DELETE', `/api/v1/audiences/${created.body.id}`)).status, 204)
  })

  test('at most 32 levels of nodes, on create, preview and update, the 400 pointing at the node', async () => {
    for (const { method, path, body } of routes(nots(MAX_DEFINITION_DEPTH + 1))) {
      const response = await sluice.api(method, path, body)
      assert.equal(response.status, 400, `${method} ${path}`)
      assert.match(response.body.error.message, /more than 32 levels deep here/)
      assert.match(response.body.error.message, /Flatten it/)
      assert.equal(response.body.error.field, `/definition${'/not'.repeat(MAX_DEFINITION_DEPTH)}`)
    }
    const created = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Deepest allowed',
      definition: nots(MAX_DEFINITION_DEPTH),
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const patched = await sluice.api('PATCH', `/api/v1/audiences/${created.body.id}`, {
      definition: nots(MAX_DEFINITION_DEPTH + 1),
    })
    assert.equal(patched.status, 400)
    assert.match(patched.body.error.message, /more than 32 levels deep/)
    // A reference stands for the definition it names: two levels here (all, the reference) plus its
    // 32 are too many; the 33rd is 30 "not"s into it.
    const referring = await sluice.api('POST', '/api/v1/audiences/preview', {
      definition: { all: [LEAF, { audience: 'deepest_allowed' }] },
    })
    assert.equal(referring.status, 400)
    assert.equal(referring.body.error.field, `/definition/all/1/audience${'/not'.repeat(30)}`)
    assert.equal((await sluice.api('DELETE', `/api/v1/audiences/${created.body.id}`)).status, 204)
  })

  test('at most 1,000 nodes, counting where conditions; at most 100 conditions in a where list', async () => {
    const wide = { any: Array.from({ length: MAX_DEFINITION_NODES }, () => LEAF) }
    for (const { method, path, body } of routes(wide)) {
      const response = await sluice.api(method, path, body)
      assert.equal(response.status, 400, `${method} ${path}`)
      assert.match(response.body.error.message, /more than 1,000 nodes/)
    }
    const fits = { any: Array.from({ length: MAX_DEFINITION_NODES - 1 }, () => LEAF) }
    assert.equal((await sluice.api('POST', '/api/v1/audiences/preview', { definition: fits })).status, 200)

    const condition = { property: 'total', op: '>', value: 1 }
    const event = (conditions: number) => ({
      event: 'Order Completed',
      where: Array.from({ length: conditions }, () => condition),
    })
    const longWhere = await sluice.api('POST', '/api/v1/audiences/preview', {
      definition: event(MAX_WHERE_CONDITIONS + 1),
    })
    assert.equal(longWhere.status, 400)
    assert.equal(longWhere.body.error.field, '/definition/where')
    assert.match(longWhere.body.error.message, /at most 100 are allowed/)
    const manyWheres = await sluice.api('POST', '/api/v1/audiences/preview', {
      definition: { all: Array.from({ length: 10 }, () => event(MAX_WHERE_CONDITIONS)) },
    })
    assert.equal(manyWheres.status, 400)
    assert.match(manyWheres.body.error.message, /more than 1,000 nodes/)

    const trait = await sluice.api('POST', '/api/v1/computed-traits', {
      name: 'Big orders',
      kind: 'count',
      ...event(MAX_WHERE_CONDITIONS + 1),
    })
    assert.equal(trait.status, 400)
    assert.match(trait.body.error.message, /where has too many entries; at most 100/)
  })

  test('a deeply nested value in a where condition is refused before it is stored', async () => {
    let value: unknown = 1
    for (let level = 0; level < 3_000; level++) value = [value]
    const response = await answersWithin(10_000, 'computed trait', () =>
      sluice.api('POST', '/api/v1/computed-traits', {
        name: 'Nested',
        kind: 'count',
        event: 'Order Completed',
        where: [{ property: 'total', op: '=', value }],
      }),
    )
    assert.equal(response.status, 400)
    assert.match(response.body.error.message, /nested more than 100 levels deep/)
    const list = await answersWithin(10_000, 'list', () => sluice.api('GET', '/api/v1/computed-traits'))
    assert.deepEqual(list.body, { computedTraits: [] })
  })
})

describe('numeric and time query parameters', () => {
  let sluice: TestSluice
  // any: the OpenAPI document is arbitrary JSON.
  let document: any
  let ids: Record<string, string>

  before(async () => {
    sluice = await startTestSluice()
    const source = await sluice.createSource('Numbers')
    const destination = await sluice.api('POST', '/api/v1/destinations', destinationBody([source.id]))
    // Real ids where the route names one, so a 404 cannot stand in for the 400.
    const audience = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Query bounds',
      definition: { event: 'Order Completed' },
    })
    ids = {
      sources: source.id,
      destinations: destination.body.id,
      profiles: 'prf_unknown',
      audiences: audience.body.id,
    }
    document = await (await fetch(`${sluice.url}/api/openapi.json`)).json()
  })
  after(() => sluice.destroy())

  const BAD_VALUES = ['-1', '1e309', 'NaN', 'abc', '10^12', 'Infinity', '0x10', ' 5', '1.5', '']

  /** Every management operation's query parameters that take a number or a time, from the OpenAPI document. */
  function numericParameters(): { method: string; path: string; name: string; kind: 'number' | 'time' }[] {
    const found = []
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      if (!path.startsWith('/api/v1/')) continue
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query') continue
          const kind =
            parameter.schema.type === 'integer' || parameter.schema.type === 'number'
              ? ('number' as const)
              : ['since', 'until', 'from', 'to'].includes(parameter.name)
                ? ('time' as const)
                : null
          if (kind === null) continue
          const concrete = path.replace(/^\/api\/v1\/(\w+)\/\{id\}/, (_all, kind: string) => {
            const id = ids[kind]
            assert.ok(id, `no id for ${path}`)
            return `/api/v1/${kind}/${id}`
          })
          found.push({ method: method.toUpperCase(), path: concrete, name: parameter.name, kind })
        }
      }
    }
    return found
  }

  test('every one is listed with both bounds', () => {
    const parameters = numericParameters()
    const names = new Set(parameters.map(({ name }) => name))
    for (const name of ['limit', 'before', 'since', 'until', 'from', 'to', 'step']) {
      assert.ok(names.has(name), `no endpoint takes ${name}?`)
    }
    for (const { method, path, name, kind } of parameters) {
      if (kind !== 'number') continue
      const operation = document.paths[path.replace(/\/(src|dst|prf|aud)_\w+/, '/{id}')][method.toLowerCase()]
      const schema = operation.parameters.find((parameter: any) => parameter.name === name).schema
      assert.ok(Number.isFinite(schema.minimum), `${method} ${path} ${name} has a minimum`)
      assert.ok(Number.isSafeInteger(schema.maximum), `${method} ${path} ${name} has a maximum`)
    }
  })

  test('-1, 1e309, NaN, abc, 10^12, Infinity… answer 400 naming the parameter and its range', async () => {
    const parameters = numericParameters()
    assert.ok(parameters.length >= 10, `only ${parameters.length} parameters found`)
    for (const { method, path, name, kind } of parameters) {
      for (const value of BAD_VALUES) {
        const url = `${path}?${name}=${encodeURIComponent(value)}`
        const response = await sluice.api(method, url)
        const label = `${method} ${url}: ${JSON.stringify(response.body)}`
        assert.equal(response.status, 400, label)
        assert.ok(response.body.error.message.includes(`"${name}"`), `names the parameter: ${label}`)
        assert.match(
          response.body.error.message,
          kind === 'number' ? /must be a whole number from [\d,]+ to [\d,]+/ : /must be an ISO 8601 time/,
          label,
        )
      }
      if (kind === 'number') {
        const twice = await sluice.api(method, `${path}?${name}=60&${name}=120`)
        assert.equal(twice.status, 400, `${method} ${path} ${name} twice`)
        assert.match(twice.body.error.message, /give it once/)
      }
    }
    const ok = await sluice.api(
      'GET',
      `/api/v1/destinations/${ids.destinations}/deliveries?limit=5&before=10`,
    )
    assert.equal(ok.status, 200)
  })

  test('a delivery id in the path is plain digits too', async () => {
    for (const value of ['-1', '1e309', 'NaN', 'Infinity', '0x10', '9007199254740993']) {
      const response = await sluice.api('GET', `/api/v1/deliveries/${encodeURIComponent(value)}`)
      assert.equal(response.status, 400, value)
      assert.equal(response.body.error.code, 'invalid_delivery_id')
    }
  })
})

describe('id lengths', () => {
  let sluice: TestSluice

  before(async () => {
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  test('a regulation names ids of at most 1,024 characters, the longest the Tracking API accepts', async () => {
    const regulate = (subjectIds: string[]) =>
      sluice.api('POST', '/api/v1/regulations', { regulationType: 'SUPPRESS_ONLY', subjectIds })
    const huge = await regulate(['ok-user', 'x'.repeat(600 * 1024)])
    assert.equal(huge.status, 400)
    assert.equal(huge.body.error.field, '/subjectIds/1')
    assert.match(huge.body.error.message, /too long; at most 1024 characters/)
    // Characters, not UTF-16 units: 1,024 emoji are 2,048 units.
    assert.equal((await regulate(['🎉'.repeat(MAX_ID_LENGTH)])).status, 201)
    assert.equal((await regulate(['x'.repeat(MAX_ID_LENGTH + 1)])).status, 400)

    const source = await sluice.createSource('Ids')
    const response = await fetch(`${sluice.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [
          { type: 'track', event: 'E', userId: '🎉'.repeat(MAX_ID_LENGTH) },
          { type: 'track', event: 'E', userId: 'u'.repeat(MAX_ID_LENGTH + 1) },
          { type: 'track', event: 'E', anonymousId: 'a'.repeat(MAX_ID_LENGTH + 1) },
        ],
      }),
    })
    const answer = (await response.json()) as { accepted: number; rejected: { error: string }[] }
    assert.equal(response.status, 200)
    assert.equal(answer.accepted, 1)
    assert.deepEqual(
      answer.rejected.map(({ error }) => error),
      [
        '.userId is 1025 characters; the limit is 1024.',
        '.anonymousId is 1025 characters; the limit is 1024.',
      ],
    )
  })
})

describe('webhook URLs shown to viewers', () => {
  let sluice: TestSluice
  let receiver: Receiver

  before(async () => {
    receiver = await startReceiver()
    sluice = await startTestSluice()
  })
  after(async () => {
    await sluice.destroy()
    await receiver.close()
  })

  test('query values and the fragment are masked everywhere a URL is shown; admins see them', async () => {
    const secrets = ['key-1234567890', 'tok-abcdef', 'frag-secret']
    const url = `http://127.0.0.1:${receiver.port}/hooks/in?api_key=key-1234567890&tok-abcdef&empty=#frag-secret`
    const source = await sluice.createSource('Masked')
    const destination = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Secret URL',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url }] },
    })
    assert.equal(destination.status, 201, JSON.stringify(destination.body))
    assert.equal(destination.body.settings.webhooks[0].url, url, 'the admin who saved it sees it whole')
    const sent = await fetch(`${sluice.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'u1', event: 'Masked' }),
    })
    assert.equal(sent.status, 200)
    const delivered = await until(
      'the delivery',
      async () => (await sluice.api('GET', `/api/v1/destinations/${destination.body.id}/deliveries`)).body,
      (page: { deliveries: { id: number; status: string }[] }) => page.deliveries[0]?.status === 'delivered',
    )
    assert.equal(receiver.requests[0]?.url, '/hooks/in?api_key=key-1234567890&tok-abcdef&empty=')
    const deliveryId = delivered.deliveries[0]!.id

    const viewer = await sluice.api('POST', '/api/v1/tokens', { name: 'Viewer', role: 'viewer' })
    const reads = [
      '/api/v1/destinations',
      `/api/v1/destinations/${destination.body.id}`,
      `/api/v1/destinations/${destination.body.id}/deliveries`,
      `/api/v1/deliveries/${deliveryId}`,
      `/api/v1/deliveries/${deliveryId}/request`,
    ]
    const masked = `http://127.0.0.1:${receiver.port}/hooks/in?api_key=••••••••&••••••••&empty=#••••••••`
    for (const path of reads) {
      const asViewer = await rawRequest(sluice.url, 'GET', path, {
        authorization: `Bearer ${viewer.body.token}`,
      })
      assert.equal(asViewer.status, 200, path)
      for (const secret of secrets) assert.ok(!asViewer.text.includes(secret), `${path} shows ${secret}`)
      assert.ok(asViewer.text.includes(JSON.stringify(masked)), `${path}: ${asViewer.text.slice(0, 600)}`)
      const asAdmin = await rawRequest(sluice.url, 'GET', path, {
        authorization: `Bearer ${sluice.adminToken}`,
      })
      assert.ok(asAdmin.text.includes(JSON.stringify(url)), `${path} shows the admin the URL`)
    }
    // Viewers cannot send a test event; the results view masks all the same.
    const test = await sluice.api('POST', `/api/v1/destinations/${destination.body.id}/test`)
    assert.equal(test.body.results[0].url, url)
    assert.equal(attemptResultView({ ...test.body.results[0], attemptedAt: 0 }, false).url, masked)
    // Credentials in the URL are refused when saved; one stored before that rule is masked too.
    assert.equal(
      urlForViewer('https://user:pass@hooks.example.com/x?a=1'),
      'https://••••••••@hooks.example.com/x?a=••••••••',
    )
    assert.equal(urlForViewer('not a url'), '••••••••')
    assert.equal(urlForViewer('https://example.com/plain'), 'https://example.com/plain')
  })
})
