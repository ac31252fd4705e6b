import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, TEST_ADMIN_TOKEN, type TestSluice } from '../helpers/sluice.ts'
import { destinationBody, rawRequest } from './helpers.ts'

describe('management API authentication', () => {
  let sluice: TestSluice
  let routes: Array<{ method: string; path: string; body?: unknown }>

  before(async () => {
    // Each case below fails on every route from one address: throttling (tested in
    // hardening-auth.test.ts) would answer 429 after the 20th.
    sluice = await startTestSluice({ authFailuresPerMinute: 0 })
    const source = await sluice.createSource('Auth source')
    const destination = await sluice.api('POST', '/api/v1/destinations', destinationBody([source.id]))
    assert.equal(destination.status, 201)
    // Real ids, so a missing auth check could not hide behind a 404.
    routes = [
      { method: 'POST', path: '/api/v1/sources', body: { name: 'x' } },
      { method: 'GET', path: '/api/v1/sources' },
      { method: 'GET', path: `/api/v1/sources/${source.id}` },
      { method: 'PATCH', path: `/api/v1/sources/${source.id}`, body: { name: 'renamed' } },
      { method: 'POST', path: `/api/v1/sources/${source.id}/rotate-write-key` },
      { method: 'DELETE', path: `/api/v1/sources/${source.id}` },
      { method: 'POST', path: '/api/v1/destinations', body: destinationBody([source.id]) },
      { method: 'GET', path: '/api/v1/destinations' },
      { method: 'GET', path: `/api/v1/destinations/${destination.body.id}` },
      { method: 'PATCH', path: `/api/v1/destinations/${destination.body.id}`, body: { name: 'renamed' } },
      { method: 'DELETE', path: `/api/v1/destinations/${destination.body.id}` },
    ]
  })
  after(() => sluice.destroy())

  const badCredentials: Array<{ case: string; authorization: string | undefined; expect: RegExp }> = [
    { case: 'no Authorization header', authorization: undefined, expect: /No token was sent/ },
    {
      case: 'a wrong token',
      authorization: `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}X`,
      expect: /token is wrong or was revoked/,
    },
    {
      case: 'a longer token',
      authorization: `Bearer ${TEST_ADMIN_TOKEN}-and-more`,
      expect: /token is wrong or was revoked/,
    },
    { case: 'an empty Bearer', authorization: 'Bearer ', expect: /not a Bearer token/ },
    {
      case: 'the token as Basic auth',
      authorization: `Basic ${btoa(`${TEST_ADMIN_TOKEN}:`)}`,
      expect: /not a Bearer token/,
    },
    { case: 'the bare token', authorization: TEST_ADMIN_TOKEN, expect: /not a Bearer token/ },
  ]

  for (const credentials of badCredentials) {
    test(`every management route answers 401 to ${credentials.case}`, async () => {
      for (const route of routes) {
        const response = await rawRequest(sluice.url, route.method, route.path, {
          authorization: credentials.authorization,
          body: route.body,
        })
        const label = `${route.method} ${route.path}`
        assert.equal(response.status, 401, label)
        assert.equal(response.body.error.code, 'unauthorized', label)
        assert.match(response.body.error.message, credentials.expect, label)
        assert.match(response.body.error.message, /SLUICE_ADMIN_TOKEN/, label)
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/, label)
      }
      // Nothing was changed by the refused requests.
      const sources = await sluice.api('GET', '/api/v1/sources')
      assert.deepEqual(
        sources.body.sources.map((source: { name: string }) => source.name),
        ['Auth source'],
      )
    })
  }

  test('the scheme name is case-insensitive', async () => {
    const response = await rawRequest(sluice.url, 'GET', '/api/v1/sources', {
      authorization: `bearer ${TEST_ADMIN_TOKEN}`,
    })
    assert.equal(response.status, 200)
  })

  test('the OpenAPI document needs no token', async () => {
    const response = await rawRequest(sluice.url, 'GET', '/api/openapi.json')
    assert.equal(response.status, 200)
  })
})
