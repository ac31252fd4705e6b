import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { destinationBody, type RawResponse, rawRequest } from './helpers.ts'

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('destinations', () => {
  let sluice: TestSluice
  let sourceA: string
  let sourceB: string
  const admin = () => ({ authorization: `Bearer ${sluice.adminToken}` })

  before(async () => {
    sluice = await startTestSluice()
    sourceA = (await sluice.createSource('A')).id
    sourceB = (await sluice.createSource('B')).id
  })
  after(() => sluice.destroy())

  test('create, get, list, update and delete a destination', async () => {
    const created = await sluice.api(
      'POST',
      '/api/v1/destinations',
      destinationBody([sourceA], {
        webhooks: [
          {
            url: 'https://hooks.example.com/one',
            headers: { Authorization: 'Bearer abc', 'X-Team': ' growth ' },
          },
          { url: 'http://hooks.example.com:8080/two?x=1' },
        ],
      }),
    )
    assert.equal(created.status, 201)
    // Saving answers with warnings (none here); reading does not.
    const { warnings, ...destination } = created.body
    assert.deepEqual(warnings, [])
    assert.match(destination.id, /^dst_/)
    assert.equal(created.headers.get('location'), `/api/v1/destinations/${destination.id}`)
    assert.deepEqual(
      { ...destination, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        name: 'Orders webhook',
        type: 'webhooks',
        enabled: true,
        sourceIds: [sourceA],
        settings: {
          webhooks: [
            {
              url: 'https://hooks.example.com/one',
              headers: { Authorization: 'Bearer abc', 'X-Team': 'growth' },
            },
            { url: 'http://hooks.example.com:8080/two?x=1', headers: {} },
          ],
          sharedSecretSet: false,
          signing: { xSignature: true, standardWebhooks: false },
          standardWebhooksSecretSet: false,
        },
        createdAt: undefined,
        updatedAt: undefined,
        stats: {
          pending: 0,
          retrying: 0,
          delivered: 0,
          failed: 0,
          deadLettered: 0,
          latencyP50Ms: null,
          latencyP95Ms: null,
          filtered: 0,
          sampledOut: 0,
        },
        // Nothing sent yet: every URL healthy, without figures.
        health: ['https://hooks.example.com/one', 'http://hooks.example.com:8080/two?x=1'].map((url) => ({
          url,
          state: 'healthy',
          consecutiveFailures: 0,
          lastSuccessAt: null,
          lastFailureAt: null,
          lastError: null,
          successRate1h: null,
          disabledAt: null,
          disabledReason: null,
        })),
      },
    )
    assert.match(destination.createdAt, ISO_8601)
    assert.match(destination.updatedAt, ISO_8601)

    const fetched = await sluice.api('GET', `/api/v1/destinations/${destination.id}`)
    assert.equal(fetched.status, 200)
    assert.deepEqual(fetched.body, destination)

    const listed = await sluice.api('GET', '/api/v1/destinations')
    assert.equal(listed.status, 200)
    assert.deepEqual(
      listed.body.destinations.find((each: { id: string }) => each.id === destination.id),
      destination,
    )

    const updated = await sluice.api('PATCH', `/api/v1/destinations/${destination.id}`, {
      name: 'Renamed',
      enabled: false,
      sourceIds: [sourceA, sourceB],
      settings: { webhooks: [{ url: 'https://hooks.example.com/three' }] },
    })
    assert.equal(updated.status, 200)
    assert.equal(updated.body.name, 'Renamed')
    assert.equal(updated.body.enabled, false)
    assert.deepEqual([...updated.body.sourceIds].sort(), [sourceA, sourceB].sort())
    assert.deepEqual(updated.body.settings.webhooks, [
      { url: 'https://hooks.example.com/three', headers: {} },
    ])
    assert.ok(updated.body.updatedAt >= destination.updatedAt)
    const { warnings: _none, ...updatedDestination } = updated.body
    assert.deepEqual(
      (await sluice.api('GET', `/api/v1/destinations/${destination.id}`)).body,
      updatedDestination,
    )

    const partial = await sluice.api('PATCH', `/api/v1/destinations/${destination.id}`, { enabled: true })
    assert.equal(partial.body.enabled, true)
    assert.equal(partial.body.name, 'Renamed', 'properties not given are kept')
    assert.deepEqual(partial.body.settings, updated.body.settings)

    const deleted = await rawRequest(sluice.url, 'DELETE', `/api/v1/destinations/${destination.id}`, admin())
    assert.equal(deleted.status, 204)
    assert.equal(deleted.text, '')
    assert.equal((await sluice.api('GET', `/api/v1/destinations/${destination.id}`)).status, 404)
  })

  test('defaults: enabled, connected to no source', async () => {
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Bare',
      type: 'webhooks',
      settings: { webhooks: [{ url: 'https://hooks.example.com/bare' }] },
    })
    assert.equal(created.status, 201)
    assert.equal(created.body.enabled, true)
    assert.deepEqual(created.body.sourceIds, [])
  })

  test('unknown ids answer 404 with a message naming the id', async () => {
    const calls: Array<[string, unknown?]> = [['GET'], ['PATCH', { name: 'x' }], ['DELETE']]
    for (const [method, body] of calls) {
      const response = await sluice.api(method, '/api/v1/destinations/dst_missing', body)
      assert.equal(response.status, 404, method)
      assert.equal(response.body.error.code, 'destination_not_found')
      assert.match(response.body.error.message, /"dst_missing"/)
    }
  })

  test('unknown sourceIds are refused, naming the id', async () => {
    const created = await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA, 'src_nope']))
    assert.equal(created.status, 400)
    assert.equal(created.body.error.field, '/sourceIds/1')
    assert.match(created.body.error.message, /no source has id "src_nope"/)

    const existing = (await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA]))).body
    const patched = await sluice.api('PATCH', `/api/v1/destinations/${existing.id}`, {
      sourceIds: ['src_gone'],
    })
    assert.equal(patched.status, 400)
    assert.equal(patched.body.error.field, '/sourceIds/0')
    assert.match(patched.body.error.message, /"src_gone"/)
    assert.deepEqual((await sluice.api('GET', `/api/v1/destinations/${existing.id}`)).body.sourceIds, [
      sourceA,
    ])
  })

  test('a repeated sourceId is refused', async () => {
    const created = await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA, sourceA]))
    assert.equal(created.status, 400)
    assert.equal(created.body.error.code, 'validation_failed')
    assert.equal(created.body.error.field, '/sourceIds')
    assert.match(created.body.error.message, /same value twice/)
  })

  test('deleting a source disconnects it from destinations', async () => {
    const doomed = await sluice.createSource('Doomed')
    const destination = (
      await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA, doomed.id]))
    ).body
    assert.equal((await sluice.api('DELETE', `/api/v1/sources/${doomed.id}`)).status, 204)
    const fetched = await sluice.api('GET', `/api/v1/destinations/${destination.id}`)
    assert.deepEqual(fetched.body.sourceIds, [sourceA])
  })

  test('the shared secret is write-only: never in any response, only whether it is set', async () => {
    const secret = 'very-secret-signing-key-7f3a9c'
    const secondSecret = 'second-secret-signing-key-b81e'
    const responses: RawResponse[] = []
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await rawRequest(sluice.url, method, path, { ...admin(), body })
      responses.push(response)
      return response
    }

    const created = await call(
      'POST',
      '/api/v1/destinations',
      destinationBody([sourceA], { sharedSecret: secret }),
    )
    assert.equal(created.status, 201)
    assert.equal(created.body.settings.sharedSecretSet, true)
    const path = `/api/v1/destinations/${created.body.id}`

    assert.equal((await call('GET', path)).body.settings.sharedSecretSet, true)
    await call('GET', '/api/v1/destinations')

    // Omitting sharedSecret keeps it, also when the URLs change.
    const renamed = await call('PATCH', path, { name: 'Still signed' })
    assert.equal(renamed.body.settings.sharedSecretSet, true)
    const newUrls = await call('PATCH', path, {
      settings: { webhooks: [{ url: 'https://hooks.example.com/new' }] },
    })
    assert.equal(newUrls.body.settings.sharedSecretSet, true)
    assert.equal((await sluice.store.getDestination(created.body.id))?.settings.sharedSecret, secret)

    // Replacing it without resending the URLs keeps the URLs.
    const replaced = await call('PATCH', path, { settings: { sharedSecret: secondSecret } })
    assert.equal(replaced.status, 200)
    assert.deepEqual(replaced.body.settings.webhooks, [{ url: 'https://hooks.example.com/new', headers: {} }])
    assert.equal((await sluice.store.getDestination(created.body.id))?.settings.sharedSecret, secondSecret)

    // Errors on a request carrying the secret do not quote it.
    const refused = await call('PATCH', path, {
      settings: { sharedSecret: secret, webhooks: [{ url: 'ftp://x' }] },
    })
    assert.equal(refused.status, 400)
    const refusedCreate = await call(
      'POST',
      '/api/v1/destinations',
      destinationBody(['src_nope'], { sharedSecret: secret }),
    )
    assert.equal(refusedCreate.status, 400)

    const cleared = await call('PATCH', path, { settings: { sharedSecret: null } })
    assert.equal(cleared.body.settings.sharedSecretSet, false)
    assert.equal((await sluice.store.getDestination(created.body.id))?.settings.sharedSecret, null)

    await call('DELETE', path)

    assert.ok(responses.length >= 10)
    for (const response of responses) {
      assert.ok(!response.text.includes(secret), `the secret appeared in: ${response.text}`)
      assert.ok(!response.text.includes(secondSecret), `the second secret appeared in: ${response.text}`)
      assert.ok(
        !response.text.includes('"sharedSecret"'),
        `a sharedSecret member appeared in: ${response.text}`,
      )
      for (const [name, value] of response.headers) {
        assert.ok(
          !value.includes(secret) && !value.includes(secondSecret),
          `the secret appeared in header ${name}`,
        )
      }
    }
  })

  describe('settings validation', () => {
    const url = (value: string) => ({ webhooks: [{ url: value }] })
    const headers = (value: Record<string, unknown>) => ({
      webhooks: [{ url: 'https://hooks.example.com/h', headers: value }],
    })
    const six = Array.from({ length: 6 }, (_, index) => ({ url: `https://hooks.example.com/${index}` }))
    const twentyOneHeaders = Object.fromEntries(
      Array.from({ length: 21 }, (_, index) => [`X-H${index}`, 'v']),
    )

    const cases: Array<{ case: string; settings: unknown; field: string; message: RegExp }> = [
      { case: 'no URLs', settings: { webhooks: [] }, field: '/settings/webhooks', message: /at least 1/ },
      { case: 'six URLs', settings: { webhooks: six }, field: '/settings/webhooks', message: /at most 5/ },
      { case: 'missing webhooks', settings: {}, field: '/settings/webhooks', message: /required/ },
      {
        case: 'ftp:// URL',
        settings: url('ftp://files.example.com/x'),
        field: '/settings/webhooks/0/url',
        message: /ftp: scheme.*http:\/\/ and https:\/\//,
      },
      {
        case: 'javascript: URL',
        settings: url('javascript:alert(1)'),
        field: '/settings/webhooks/0/url',
        message: /javascript: scheme/,
      },
      {
        case: 'relative URL',
        settings: url('/hooks/sluice'),
        field: '/settings/webhooks/0/url',
        message: /not an absolute URL.*https:\/\//,
      },
      {
        case: 'URL without scheme',
        settings: url('hooks.example.com/x'),
        field: '/settings/webhooks/0/url',
        message: /not an absolute URL/,
      },
      {
        case: 'URL without //',
        settings: url('https:hooks.example.com'),
        field: '/settings/webhooks/0/url',
        message: /not an absolute URL/,
      },
      {
        case: 'URL without host',
        settings: url('https://'),
        field: '/settings/webhooks/0/url',
        message: /not an absolute URL/,
      },
      { case: 'empty URL', settings: url(''), field: '/settings/webhooks/0/url', message: /is required/ },
      {
        case: 'missing URL',
        settings: { webhooks: [{ headers: {} }] },
        field: '/settings/webhooks/0/url',
        message: /is required/,
      },
      {
        case: 'URL with credentials',
        settings: url('https://user:pass@hooks.example.com/'),
        field: '/settings/webhooks/0/url',
        message: /credentials.*Authorization/,
      },
      {
        case: 'URL over 2048 characters',
        settings: url(`https://hooks.example.com/${'a'.repeat(2048)}`),
        field: '/settings/webhooks/0/url',
        message: /at most 2048/,
      },
      {
        case: 'a repeated URL',
        settings: {
          webhooks: [{ url: 'https://hooks.example.com/a' }, { url: 'https://hooks.example.com/a' }],
        },
        field: '/settings/webhooks/1/url',
        message: /repeats the URL of settings.webhooks\[0\].url/,
      },
      {
        case: 'reserved User-Agent',
        settings: headers({ 'User-Agent': 'me' }),
        field: '/settings/webhooks/0/headers/User-Agent',
        message: /"User-Agent".*cannot be configured/,
      },
      {
        case: 'reserved content-type (lower case)',
        settings: headers({ 'content-type': 'text/plain' }),
        field: '/settings/webhooks/0/headers/content-type',
        message: /cannot be configured/,
      },
      {
        case: 'reserved X-SIGNATURE (upper case)',
        settings: headers({ 'X-SIGNATURE': 'forged' }),
        field: '/settings/webhooks/0/headers/X-SIGNATURE',
        message: /cannot be configured/,
      },
      {
        case: 'reserved Host',
        settings: headers({ Host: 'internal' }),
        field: '/settings/webhooks/0/headers/Host',
        message: /cannot be configured/,
      },
      {
        case: 'reserved Content-Length',
        settings: headers({ 'Content-Length': '1' }),
        field: '/settings/webhooks/0/headers/Content-Length',
        message: /cannot be configured/,
      },
      {
        case: 'reserved Expect',
        settings: headers({ expect: '100-continue' }),
        field: '/settings/webhooks/0/headers/expect',
        message: /cannot be configured/,
      },
      {
        case: 'hop-by-hop Connection',
        settings: headers({ connection: 'close' }),
        field: '/settings/webhooks/0/headers/connection',
        message: /cannot be configured/,
      },
      {
        case: 'hop-by-hop Transfer-Encoding',
        settings: headers({ 'Transfer-Encoding': 'chunked' }),
        field: '/settings/webhooks/0/headers/Transfer-Encoding',
        message: /cannot be configured/,
      },
      {
        case: 'hop-by-hop te',
        settings: headers({ te: 'trailers' }),
        field: '/settings/webhooks/0/headers/te',
        message: /cannot be configured/,
      },
      {
        case: 'hop-by-hop Proxy-Authorization',
        settings: headers({ 'proxy-AUTHORIZATION': 'x' }),
        field: '/settings/webhooks/0/headers/proxy-AUTHORIZATION',
        message: /cannot be configured/,
      },
      {
        case: 'CR LF in a value',
        settings: headers({ 'X-Evil': 'a\r\nX-Injected: 1' }),
        field: '/settings/webhooks/0/headers/X-Evil',
        message: /line break/,
      },
      {
        case: 'LF alone in a value',
        settings: headers({ 'X-Evil': 'a\nb' }),
        field: '/settings/webhooks/0/headers/X-Evil',
        message: /line break/,
      },
      {
        case: 'NUL in a value',
        settings: headers({ 'X-Evil': 'a\u0000b' }),
        field: '/settings/webhooks/0/headers/X-Evil',
        message: /NUL/,
      },
      {
        case: 'a non-ASCII value',
        settings: headers({ 'X-Name': 'café' }),
        field: '/settings/webhooks/0/headers/X-Name',
        message: /printable ASCII/,
      },
      {
        case: 'a header name with a space',
        settings: headers({ 'X Team': 'a' }),
        field: '/settings/webhooks/0/headers/X Team',
        message: /not a legal HTTP header name/,
      },
      {
        case: 'a header name with a colon',
        settings: headers({ 'X-Team:': 'a' }),
        field: '/settings/webhooks/0/headers/X-Team:',
        message: /not a legal HTTP header name/,
      },
      {
        case: 'an empty header name',
        settings: headers({ '': 'a' }),
        field: '/settings/webhooks/0/headers/',
        message: /not a legal HTTP header name/,
      },
      {
        case: 'a header name with a slash',
        settings: headers({ 'X/Y': 'a' }),
        field: '/settings/webhooks/0/headers/X~1Y',
        message: /not a legal HTTP header name/,
      },
      {
        case: 'header names repeated in another case',
        settings: headers({ 'X-Team': 'a', 'x-team': 'b' }),
        field: '/settings/webhooks/0/headers/x-team',
        message: /repeats "X-Team"/,
      },
      {
        case: 'a non-string header value',
        settings: headers({ 'X-Count': { n: 1 } }),
        field: '/settings/webhooks/0/headers/X-Count',
        message: /must be a string/,
      },
      {
        case: 'more than 20 headers',
        settings: headers(twentyOneHeaders),
        field: '/settings/webhooks/0/headers',
        message: /at most 20/,
      },
      {
        case: 'a header value over 4 KB',
        settings: headers({ 'X-Big': 'a'.repeat(4097) }),
        field: '/settings/webhooks/0/headers/X-Big',
        message: /at most 4096/,
      },
      {
        case: 'an empty secret',
        settings: { ...url('https://hooks.example.com/h'), sharedSecret: '' },
        field: '/settings/sharedSecret',
        message: /null to remove/,
      },
      {
        case: 'a secret over 1 KB',
        settings: { ...url('https://hooks.example.com/h'), sharedSecret: 's'.repeat(1025) },
        field: '/settings/sharedSecret',
        message: /at most 1024 bytes/,
      },
      {
        case: 'a typo in settings',
        settings: { ...url('https://hooks.example.com/h'), sharedSecert: 'x' },
        field: '/settings/sharedSecert',
        message: /Unknown property "sharedSecert".*webhooks, sharedSecret/,
      },
      {
        case: 'a typo in a webhook',
        settings: { webhooks: [{ url: 'https://hooks.example.com/h', header: {} }] },
        field: '/settings/webhooks/0/header',
        message: /Unknown property "header".*url, headers/,
      },
      {
        case: 'a number as URL',
        settings: { webhooks: [{ url: 42 }] },
        field: '/settings/webhooks/0/url',
        message: /must be a string/,
      },
      {
        case: 'a number as secret',
        settings: { ...url('https://hooks.example.com/h'), sharedSecret: 1234 },
        field: '/settings/sharedSecret',
        message: /must be a string or null/,
      },
      {
        case: 'webhooks not an array',
        settings: { webhooks: { url: 'https://hooks.example.com/h' } },
        field: '/settings/webhooks',
        message: /must be an array/,
      },
    ]

    for (const each of cases) {
      test(`refuses ${each.case}`, async () => {
        const response = await sluice.api(
          'POST',
          '/api/v1/destinations',
          destinationBody([sourceA], {}, { settings: each.settings }),
        )
        assert.equal(response.status, 400, JSON.stringify(response.body))
        assert.equal(response.body.error.code, 'validation_failed')
        assert.equal(response.body.error.field, each.field)
        assert.match(response.body.error.message, each.message)
      })
    }

    test('the same rules apply on PATCH, and a refused PATCH changes nothing', async () => {
      const { warnings: _none, ...existing } = (
        await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA]))
      ).body
      const path = `/api/v1/destinations/${existing.id}`
      for (const each of cases.filter((entry) => !entry.case.startsWith('missing webhooks'))) {
        const response = await sluice.api('PATCH', path, { settings: each.settings })
        assert.equal(response.status, 400, `${each.case}: ${JSON.stringify(response.body)}`)
        assert.equal(response.body.error.field, each.field, each.case)
      }
      assert.deepEqual((await sluice.api('GET', path)).body, existing)
    })

    test('accepts the limits themselves: 5 URLs, 20 headers, 4 KB values, 1 KB secret', async () => {
      const twentyHeaders = Object.fromEntries(
        Array.from({ length: 20 }, (_, index) => [`X-H${index}`, 'v'.repeat(4096)]),
      )
      const five = Array.from({ length: 5 }, (_, index) => ({
        url: `https://hooks.example.com/${index}`,
        headers: twentyHeaders,
      }))
      const response = await sluice.api(
        'POST',
        '/api/v1/destinations',
        destinationBody([sourceA], { webhooks: five, sharedSecret: 's'.repeat(1024) }),
      )
      assert.equal(response.status, 201, JSON.stringify(response.body).slice(0, 500))
      assert.equal(response.body.settings.webhooks.length, 5)
    })

    test('accepts legal unusual header names and empty values', async () => {
      const response = await sluice.api(
        'POST',
        '/api/v1/destinations',
        destinationBody([sourceA], {
          webhooks: [
            {
              url: 'https://hooks.example.com/h',
              headers: { "X-a!#$%&'*+.^_`|~1": '', Authorization: 'Basic abc=' },
            },
          ],
        }),
      )
      assert.equal(response.status, 201, JSON.stringify(response.body))
    })

    test('refuses other destination types and unknown top-level properties', async () => {
      const wrongType = await sluice.api(
        'POST',
        '/api/v1/destinations',
        destinationBody([sourceA], {}, { type: 'slack' }),
      )
      assert.equal(wrongType.status, 400)
      assert.equal(wrongType.body.error.field, '/type')
      assert.match(wrongType.body.error.message, /one of: "webhooks"/)

      const typo = await sluice.api(
        'POST',
        '/api/v1/destinations',
        destinationBody([sourceA], {}, { sourceIDs: [] }),
      )
      assert.equal(typo.status, 400)
      assert.equal(typo.body.error.field, '/sourceIDs')
      assert.match(typo.body.error.message, /Unknown property "sourceIDs"/)

      const existing = (await sluice.api('POST', '/api/v1/destinations', destinationBody([sourceA]))).body
      const changeType = await sluice.api('PATCH', `/api/v1/destinations/${existing.id}`, {
        type: 'webhooks',
      })
      assert.equal(changeType.status, 400)
      assert.match(changeType.body.error.message, /Unknown property "type"/)
    })
  })
})
