import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { rawRequest, trackCall, writeKeyAuth } from './helpers.ts'

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('sources', () => {
  let sluice: TestSluice

  before(async () => {
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  test('create, get, list, update and delete a source', async () => {
    const created = await sluice.api('POST', '/api/v1/sources', { name: '  Website  ' })
    assert.equal(created.status, 201)
    const source = created.body
    assert.match(source.id, /^src_/)
    assert.equal(source.name, 'Website', 'surrounding whitespace is removed')
    assert.equal(source.enabled, true)
    assert.ok(source.writeKey.length >= 32, 'write keys are long enough to be unguessable')
    assert.match(source.createdAt, ISO_8601)
    assert.deepEqual(source.stats, { accepted: 0, duplicates: 0, rejected: 0, suppressed: 0 })
    assert.equal(created.headers.get('location'), `/api/v1/sources/${source.id}`)

    const fetched = await sluice.api('GET', `/api/v1/sources/${source.id}`)
    assert.equal(fetched.status, 200)
    assert.deepEqual(fetched.body, source)

    const listed = await sluice.api('GET', '/api/v1/sources')
    assert.equal(listed.status, 200)
    assert.ok(listed.body.sources.some((each: { id: string }) => each.id === source.id))

    const renamed = await sluice.api('PATCH', `/api/v1/sources/${source.id}`, {
      name: 'Web app',
      enabled: false,
    })
    assert.equal(renamed.status, 200)
    assert.equal(renamed.body.name, 'Web app')
    assert.equal(renamed.body.enabled, false)
    assert.equal(renamed.body.writeKey, source.writeKey, 'a rename keeps the write key')
    assert.equal((await sluice.api('GET', `/api/v1/sources/${source.id}`)).body.enabled, false)

    const deleted = await rawRequest(sluice.url, 'DELETE', `/api/v1/sources/${source.id}`, {
      authorization: `Bearer ${sluice.adminToken}`,
    })
    assert.equal(deleted.status, 204)
    assert.equal(deleted.text, '')
    assert.equal((await sluice.api('GET', `/api/v1/sources/${source.id}`)).status, 404)
  })

  test('a source can be created disabled', async () => {
    const created = await sluice.api('POST', '/api/v1/sources', { name: 'Later', enabled: false })
    assert.equal(created.status, 201)
    assert.equal(created.body.enabled, false)
  })

  test('write keys differ between sources', async () => {
    const first = await sluice.api('POST', '/api/v1/sources', { name: 'One' })
    const second = await sluice.api('POST', '/api/v1/sources', { name: 'Two' })
    assert.notEqual(first.body.writeKey, second.body.writeKey)
  })

  test('unknown ids answer 404 with a message naming the id', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/sources/src_missing'],
      ['PATCH', '/api/v1/sources/src_missing', { name: 'x' }],
      ['DELETE', '/api/v1/sources/src_missing'],
      ['POST', '/api/v1/sources/src_missing/rotate-write-key'],
    ]
    for (const [method, path, body] of calls) {
      const response = await sluice.api(method, path, body)
      assert.equal(response.status, 404, `${method} ${path}`)
      assert.equal(response.body.error.code, 'source_not_found')
      assert.match(response.body.error.message, /"src_missing"/)
      assert.match(response.body.error.message, /GET \/api\/v1\/sources/)
    }
  })

  test('rotating the write key: the old key stops authenticating, the new one works', async () => {
    const source = (await sluice.api('POST', '/api/v1/sources', { name: 'Rotating' })).body
    const track = (writeKey: string) =>
      rawRequest(sluice.url, 'POST', '/v1/track', {
        authorization: writeKeyAuth(writeKey),
        body: trackCall(),
      })
    assert.equal((await track(source.writeKey)).status, 200)

    const rotated = await sluice.api('POST', `/api/v1/sources/${source.id}/rotate-write-key`)
    assert.equal(rotated.status, 200)
    assert.notEqual(rotated.body.writeKey, source.writeKey)
    assert.equal(rotated.body.id, source.id)
    assert.equal((await track(source.writeKey)).status, 401)
    assert.equal((await track(rotated.body.writeKey)).status, 200)

    // The same through PATCH.
    const patched = await sluice.api('PATCH', `/api/v1/sources/${source.id}`, { rotateWriteKey: true })
    assert.equal(patched.status, 200)
    assert.notEqual(patched.body.writeKey, rotated.body.writeKey)
    assert.equal((await track(rotated.body.writeKey)).status, 401)
    assert.equal((await track(patched.body.writeKey)).status, 200)

    const kept = await sluice.api('PATCH', `/api/v1/sources/${source.id}`, { rotateWriteKey: false })
    assert.equal(kept.body.writeKey, patched.body.writeKey, 'rotateWriteKey: false keeps the key')
  })

  test('a disabled source refuses tracking calls until enabled again', async () => {
    const source = (await sluice.api('POST', '/api/v1/sources', { name: 'Toggled' })).body
    const track = () =>
      rawRequest(sluice.url, 'POST', '/v1/track', {
        authorization: writeKeyAuth(source.writeKey),
        body: trackCall(),
      })
    await sluice.api('PATCH', `/api/v1/sources/${source.id}`, { enabled: false })
    assert.equal((await track()).status, 401)
    await sluice.api('PATCH', `/api/v1/sources/${source.id}`, { enabled: true })
    assert.equal((await track()).status, 200)
  })

  test('stats count accepted, duplicate and rejected messages', async () => {
    const source = (await sluice.api('POST', '/api/v1/sources', { name: 'Counted' })).body
    const batch = {
      batch: [
        { type: 'track', userId: 'u1', event: 'A', messageId: 'm-1' },
        { type: 'track', userId: 'u1', event: 'A', messageId: 'm-1' },
        { type: 'track', userId: 'u1' },
      ],
    }
    const response = await rawRequest(sluice.url, 'POST', '/v1/batch', {
      authorization: writeKeyAuth(source.writeKey),
      body: batch,
    })
    assert.equal(response.status, 200)
    const fetched = await sluice.api('GET', `/api/v1/sources/${source.id}`)
    assert.deepEqual(fetched.body.stats, { accepted: 1, duplicates: 1, rejected: 1, suppressed: 0 })
  })

  describe('validation', () => {
    const cases: Array<{
      case: string
      method: 'POST' | 'PATCH'
      body: unknown
      field?: string
      message: RegExp
    }> = [
      { case: 'missing name', method: 'POST', body: {}, field: '/name', message: /name is required/ },
      {
        case: 'empty name',
        method: 'POST',
        body: { name: '' },
        field: '/name',
        message: /name must not be empty/,
      },
      {
        case: 'blank name',
        method: 'POST',
        body: { name: '   ' },
        field: '/name',
        message: /visible character/,
      },
      {
        case: 'long name',
        method: 'POST',
        body: { name: 'x'.repeat(201) },
        field: '/name',
        message: /at most 200/,
      },
      {
        case: 'object name',
        method: 'POST',
        body: { name: { a: 1 } },
        field: '/name',
        message: /must be a string/,
      },
      {
        case: 'a number as name',
        method: 'POST',
        body: { name: 5 },
        field: '/name',
        message: /name must be a string/,
      },
      {
        case: 'null as name',
        method: 'POST',
        body: { name: null },
        field: '/name',
        message: /name must be a string/,
      },
      {
        case: 'a number as enabled',
        method: 'POST',
        body: { name: 'x', enabled: 0 },
        field: '/enabled',
        message: /enabled must be a boolean/,
      },
      {
        case: 'a string as enabled',
        method: 'PATCH',
        body: { enabled: 'false' },
        field: '/enabled',
        message: /enabled must be a boolean/,
      },
      {
        case: 'enabled not boolean',
        method: 'POST',
        body: { name: 'x', enabled: 'maybe' },
        field: '/enabled',
        message: /boolean/,
      },
      {
        case: 'typo in a property',
        method: 'POST',
        body: { name: 'x', enabeld: false },
        field: '/enabeld',
        message: /Unknown property "enabeld".*allowed: name, enabled/,
      },
      {
        case: 'writeKey cannot be set',
        method: 'PATCH',
        body: { writeKey: 'mine' },
        field: '/writeKey',
        message: /Unknown property "writeKey".*rotateWriteKey/,
      },
      { case: 'body is an array', method: 'POST', body: [{ name: 'x' }], message: /must be a JSON object/ },
    ]
    for (const each of cases) {
      test(`refuses ${each.case}`, async () => {
        const existing = (await sluice.api('POST', '/api/v1/sources', { name: 'Validated' })).body
        const path = each.method === 'POST' ? '/api/v1/sources' : `/api/v1/sources/${existing.id}`
        const response = await sluice.api(each.method, path, each.body)
        assert.equal(response.status, 400)
        assert.equal(response.body.error.code, 'validation_failed')
        assert.equal(response.body.error.field, each.field)
        assert.match(response.body.error.message, each.message)
      })
    }

    test('refuses a body that is not JSON, saying so', async () => {
      const response = await fetch(`${sluice.url}/api/v1/sources`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sluice.adminToken}`, 'content-type': 'application/json' },
        body: '{"name": ',
      })
      assert.equal(response.status, 400)
      const body = (await response.json()) as { error: { message: string } }
      assert.match(body.error.message, /not valid JSON/)
    })
  })
})
