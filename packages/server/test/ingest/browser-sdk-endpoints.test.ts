/**
 * What browser SDKs need from the Tracking API, over plain HTTP (the SDKs themselves run in real
 * Chromium in test/browser/): the settings documents, analytics.js's short paths, RudderStack's beacon
 * path, CORS preflights, and the enrichment they rely on (context.ip, skew correction).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import type { Source } from '../../src/domain/sources.ts'
import { spawnSluice } from '../helpers/process.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

/** A GET with headers fetch() may not set (Host, X-Forwarded-*). */
function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        }),
      )
    })
    request.on('error', reject)
    request.end()
  })
}

const SHORT_PATHS = { t: 'track', p: 'page', i: 'identify', g: 'group', a: 'alias', s: 'screen' } as const

describe('with the default configuration', () => {
  let sluice: TestSluice
  let source: Source
  before(async () => {
    sluice = await startTestSluice()
    source = await sluice.createSource('Website')
  })
  after(() => sluice.destroy())

  const stored = async (messageId: string) => {
    const message = await sluice.store.getMessage(source.id, messageId)
    assert.ok(message, `${messageId} should be stored`)
    return message
  }

  test("analytics.js settings send the SDK back to this Sluice, as the request's host names it", async () => {
    const response = await fetch(`${sluice.url}/v1/projects/${source.writeKey}/settings`)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('access-control-allow-origin'), '*')
    // Its URLs come from the request's Host: no shared cache may keep it for others.
    assert.equal(response.headers.get('cache-control'), 'private, max-age=300')
    assert.equal(response.headers.get('vary'), 'Host, X-Forwarded-Host, X-Forwarded-Proto')
    const settings = (await response.json()) as any
    const segmentIo = settings.integrations['Segment.io']
    assert.equal(segmentIo.apiKey, source.writeKey)
    assert.equal(segmentIo.apiHost, `${new URL(sluice.url).host}/v1`)
    assert.equal(segmentIo.protocol, 'http')
    assert.deepEqual(Object.keys(settings.integrations), ['Segment.io'], 'no device-mode destinations')
    assert.equal(settings.metrics.sampleRate, 0, "no metrics to Segment's servers")

    const viaName = await get(`${sluice.url}/v1/projects/${source.writeKey}/settings`, {
      host: 'analytics.example.org:8443',
    })
    assert.equal(viaName.body.integrations['Segment.io'].apiHost, 'analytics.example.org:8443/v1')
  })

  test('settings: an unknown write key is a 404, a Host header that is no host name a 400', async () => {
    const unknown = await fetch(`${sluice.url}/v1/projects/nope/settings`)
    assert.equal(unknown.status, 404)
    assert.equal(((await unknown.json()) as any).error.code, 'unknown_write_key')
    const badHost = await get(`${sluice.url}/v1/projects/${source.writeKey}/settings`, {
      host: 'evil.example/path?',
    })
    assert.equal(badHost.status, 400)
    assert.equal(badHost.body.error.code, 'invalid_host')
    assert.match(badHost.body.error.message, /SLUICE_PUBLIC_URL/)
  })

  test("RudderStack's sourceConfig: by the query's write key or HTTP Basic, with or without the slash", async () => {
    const byQuery = await fetch(`${sluice.url}/sourceConfig/?p=npm&v=3.34.1&writeKey=${source.writeKey}`)
    assert.equal(byQuery.status, 200)
    assert.equal(byQuery.headers.get('access-control-allow-origin'), '*')
    const config = (await byQuery.json()) as any
    assert.deepEqual(
      {
        id: config.source.id,
        enabled: config.source.enabled,
        destinations: config.source.destinations,
        errors: config.source.config.statsCollection.errors.enabled,
        metrics: config.source.config.statsCollection.metrics.enabled,
      },
      { id: source.id, enabled: true, destinations: [], errors: false, metrics: false },
    )
    const byBasic = await fetch(`${sluice.url}/sourceConfig`, {
      headers: { authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
    })
    assert.equal(((await byBasic.json()) as any).source.id, source.id)
    assert.equal((await fetch(`${sluice.url}/sourceConfig/?writeKey=nope`)).status, 404)
    assert.equal((await fetch(`${sluice.url}/sourceConfig/`)).status, 404)

    const disabled = await sluice.createSource('Disabled website')
    await sluice.api('PATCH', `/api/v1/sources/${disabled.id}`, { enabled: false })
    const off = (await (
      await fetch(`${sluice.url}/sourceConfig/?writeKey=${disabled.writeKey}`)
    ).json()) as any
    assert.equal(off.source.enabled, false, 'the SDK stops on a disabled source')
  })

  test('the short paths store the same calls as the long ones, and answer the same', async () => {
    for (const [letter, type] of Object.entries(SHORT_PATHS)) {
      const call = {
        userId: 'u-1',
        event: 'E',
        groupId: 'g-1',
        previousId: 'p-1',
        messageId: `short-${letter}`,
      }
      const response = await send(sluice.url, `/v1/${letter}`, call, {
        writeKey: source.writeKey,
        headers: { 'content-type': 'text/plain' },
      })
      assert.deepEqual([response.status, response.body], [200, { success: true }], `/v1/${letter}`)
      assert.equal((await stored(`short-${letter}`)).type, type)
    }
    const batch = await send(
      sluice.url,
      '/v1/b',
      {
        batch: [trackCall({ messageId: 'short-b' })],
        writeKey: source.writeKey,
        sentAt: new Date().toISOString(),
      },
      { headers: { 'content-type': 'text/plain' } },
    )
    assert.deepEqual([batch.status, batch.body], [200, { success: true }])
    await stored('short-b')

    // An invalid call, and a missing write key: the same answers as the long paths.
    const invalid = { userId: 'u-1' }
    const short = await send(sluice.url, '/v1/t', invalid, { writeKey: source.writeKey })
    const long = await send(sluice.url, '/v1/track', invalid, { writeKey: source.writeKey })
    assert.deepEqual([short.status, short.body], [long.status, long.body])
    assert.equal(short.body.rejected.length, 1)
    const noKey = await send(sluice.url, '/v1/b', { batch: [] })
    assert.deepEqual(
      [noKey.status, noKey.body],
      [401, (await send(sluice.url, '/v1/batch', { batch: [] })).body],
    )
  })

  test("RudderStack's beacon batches carry the write key in the query string", async () => {
    const body = { batch: [trackCall({ messageId: 'beacon-1' })], sentAt: new Date().toISOString() }
    const accepted = await send(sluice.url, `/beacon/v1/batch?writeKey=${source.writeKey}`, body, {
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    })
    assert.deepEqual([accepted.status, accepted.body], [200, { success: true }])
    await stored('beacon-1')
    assert.equal((await send(sluice.url, '/beacon/v1/batch', body)).status, 401)
    // Only the beacon path reads the query string: elsewhere a key in the URL would end up in logs.
    assert.equal((await send(sluice.url, `/v1/batch?writeKey=${source.writeKey}`, body)).status, 401)
  })

  test('preflights allow the headers the SDKs send, for a day, on their paths only', async () => {
    const asked = 'authorization,content-type,x-retry-count,anonymousid,sentat,rsa-retry-attempt,x-custom'
    for (const path of [
      '/v1/t',
      '/v1/b',
      `/v1/projects/${source.writeKey}/settings`,
      '/sourceConfig/',
      '/beacon/v1/batch',
    ]) {
      const response = await fetch(sluice.url + path, {
        method: 'OPTIONS',
        headers: { origin: 'https://shop.example.com', 'access-control-request-headers': asked },
      })
      assert.equal(response.status, 204, path)
      assert.equal(response.headers.get('access-control-allow-origin'), '*')
      assert.equal(response.headers.get('access-control-max-age'), '86400')
      assert.match(response.headers.get('access-control-allow-methods') ?? '', /GET.*POST/)
      const allowed = (response.headers.get('access-control-allow-headers') ?? '').split(', ')
      for (const header of asked.split(',')) assert.ok(allowed.includes(header), `${path} allows ${header}`)
    }
    const management = await fetch(`${sluice.url}/api/v1/sources`, { method: 'OPTIONS' })
    assert.equal(management.headers.get('access-control-allow-origin'), null, 'no CORS on the management API')
  })

  test('context.ip is the connection address; a proxy header is not believed by default', async () => {
    await send(sluice.url, '/v1/t', trackCall({ messageId: 'ip-default' }), {
      writeKey: source.writeKey,
      headers: { 'x-forwarded-for': '203.0.113.7' },
    })
    assert.equal(((await stored('ip-default')).payload.context as any).ip, '127.0.0.1')
  })

  test("RudderStack's calls: originalTimestamp is skew-corrected, a blank userId is absent, identify traits come from context.traits", async () => {
    const now = Date.now()
    // The browser's clock is an hour slow; the event happened 2 s before sending.
    const sentAt = new Date(now - 3_600_000).toISOString()
    const originalTimestamp = new Date(now - 3_602_000).toISOString()
    const response = await send(
      sluice.url,
      '/v1/identify',
      {
        type: 'identify',
        userId: '',
        anonymousId: 'anon-1',
        messageId: 'rudder-identify',
        originalTimestamp,
        sentAt,
        event: null,
        properties: null,
        context: { traits: { plan: 'pro' } },
      },
      { writeKey: source.writeKey },
    )
    assert.deepEqual(response.body, { success: true })
    const { payload } = await stored('rudder-identify')
    assert.equal('userId' in payload, false)
    assert.deepEqual(payload.traits, { plan: 'pro' })
    assert.equal(payload.originalTimestamp, originalTimestamp)
    const corrected = Date.parse(payload.timestamp as string)
    const receivedAt = Date.parse(payload.receivedAt as string)
    assert.equal(corrected, receivedAt - 2_000)

    // A blank userId alone still identifies nobody.
    const nobody = await send(
      sluice.url,
      '/v1/track',
      { userId: '', event: 'E' },
      { writeKey: source.writeKey },
    )
    assert.match(nobody.body.rejected[0].error, /userId or \.anonymousId is required/)
  })
})

describe('behind a proxy, with a public URL', () => {
  let sluice: TestSluice
  let source: Source
  before(async () => {
    sluice = await startTestSluice({ trustProxy: true })
    source = await sluice.createSource('Proxied website')
  })
  after(() => sluice.destroy())

  test("a trusted proxy's X-Forwarded-For is context.ip, and its -Proto and -Host name the settings' host", async () => {
    await send(sluice.url, '/v1/t', trackCall({ messageId: 'ip-proxied' }), {
      writeKey: source.writeKey,
      headers: { 'x-forwarded-for': '203.0.113.7' },
    })
    const message = await sluice.store.getMessage(source.id, 'ip-proxied')
    assert.ok(message)
    assert.equal((message.payload.context as any).ip, '203.0.113.7')
    const settings = await get(`${sluice.url}/v1/projects/${source.writeKey}/settings`, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'events.example.com',
    })
    assert.equal(settings.body.integrations['Segment.io'].apiHost, 'events.example.com/v1')
    assert.equal(settings.body.integrations['Segment.io'].protocol, 'https')
  })

  test('SLUICE_PUBLIC_URL wins over the request', async () => {
    const pinned = await startTestSluice({ publicUrl: 'https://example.com/sluice' })
    try {
      const other = await pinned.createSource('Pinned')
      const settings = await get(`${pinned.url}/v1/projects/${other.writeKey}/settings`, {
        host: 'internal:9000',
      })
      assert.equal(settings.body.integrations['Segment.io'].apiHost, 'example.com/sluice/v1')
      assert.equal(settings.body.integrations['Segment.io'].protocol, 'https')
      // The same document whatever the request's Host: any cache may keep it.
      assert.equal(settings.headers['cache-control'], 'public, max-age=300')
      assert.equal(settings.headers.vary, undefined)
    } finally {
      await pinned.destroy()
    }
  })
})

test('request logs never show a write key from a settings URL or a beacon query', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-logs-'))
  const sluice = await spawnSluice({
    LOG_LEVEL: 'info',
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: 'logs-admin-token-of-24-chars',
  })
  try {
    for (const path of [
      '/v1/projects/KEY-IN-PATH/settings',
      '/sourceConfig/?p=npm&writeKey=KEY-IN-QUERY',
      '/beacon/v1/batch?writeKey=KEY-IN-BEACON',
      // Other spellings the router and the query-string parser read the same way.
      '/beacon/v1/batch?write%4Bey=KEY-IN-ENCODED-NAME',
      '/beacon/v1/batch?x=1&%77rite%4B%65y=KEY-IN-ALL-ENCODED',
      '/sourceConfig?WriteKey+=KEY-IN-ODD-CASE',
      '/v1/%70rojects/KEY-IN-ENCODED-PATH/settings',
    ]) {
      await fetch(
        sluice.url + path,
        path.startsWith('/beacon') ? { method: 'POST', body: '{"batch":[]}' } : {},
      )
    }
    await until(
      'the request logs',
      () => sluice.output(),
      (output) =>
        output.includes('/beacon/v1/batch?writeKey=[redacted]') &&
        output.includes('/v1/%70rojects/[redacted]/settings'),
    )
    assert.doesNotMatch(sluice.output(), /KEY-IN-/)
    assert.match(sluice.output(), /\/v1\/projects\/\[redacted\]\/settings/)
  } finally {
    sluice.child.kill('SIGTERM')
    await sluice.exited
    await rm(dataDir, { recursive: true, force: true })
  }
})

describe('configuration', () => {
  test('SLUICE_PUBLIC_URL is an absolute http(s) URL, kept without its trailing slash', () => {
    assert.equal(loadConfig({}).publicUrl, undefined)
    assert.equal(
      loadConfig({ SLUICE_PUBLIC_URL: 'https://sluice.example.com/' }).publicUrl,
      'https://sluice.example.com',
    )
    for (const bad of [
      'sluice.example.com',
      'ftp://x.example',
      'https://x.example/?a=1',
      'https://u:p@x.example',
    ]) {
      assert.throws(() => loadConfig({ SLUICE_PUBLIC_URL: bad }), ConfigError, bad)
    }
  })

  test('SLUICE_TRUST_PROXY: false, true, a hop count, or addresses', () => {
    assert.equal(loadConfig({}).trustProxy, false)
    assert.equal(loadConfig({ SLUICE_TRUST_PROXY: 'true' }).trustProxy, true)
    assert.equal(loadConfig({ SLUICE_TRUST_PROXY: '2' }).trustProxy, 2)
    assert.equal(
      loadConfig({ SLUICE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy,
      '10.0.0.0/8, 127.0.0.1',
    )
    assert.throws(() => loadConfig({ SLUICE_TRUST_PROXY: 'the load balancer' }), ConfigError)
  })
})
