/**
 * Authentication and secrets.
 *
 * - Every management operation — enumerated from `/api/openapi.json`, so a new route is covered
 *   without touching this file, and checked against the server's route table so none is missing from
 *   the document — answers 401 JSON to no token, a wrong token, and a source's write key presented as
 *   Bearer or Basic credentials, and changes nothing.
 * - A write key is good for the Tracking API of its own source only: what it sends is stored under
 *   that source and delivered to that source's destinations, whatever other keys the body names.
 * - `sharedSecret` never appears in any response body or header, in any log line at trace level, in
 *   any error message, or in anything sent to a webhook, across a full scenario run on a real child
 *   process: create, get, list, patch, test send, deliveries (delivered and dead-lettered), replays,
 *   stats, and refused requests that carry the secret.
 * - Static headers with CR or LF, or a reserved name in any case, are refused on create and update.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { RESERVED_HEADER_NAMES } from '../../src/domain/webhook-settings.ts'
import { opensslHmacSha1, startReceiver, unusedPort } from '../deliver/receivers.ts'
import { spawnSluice } from '../helpers/process.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { assertJsonError, until } from './helpers.ts'

const cleanup: Array<() => Promise<void>> = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

/** Every method and path of the route table, from `printRoutes({ commonPrefix: false })`. */
function routeTable(printed: string): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = []
  const stack: string[] = []
  for (const line of printed.split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line)
    if (!match) continue
    const depth = match[1]!.length / 4
    stack.length = depth
    stack.push(match[2]!)
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, path: stack.join('') })
  }
  return routes
}

const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`

describe('management API authentication, every route', () => {
  let sluice: TestSluice
  let operations: Array<{ method: string; path: string }>
  let sourceA: { id: string; writeKey: string }
  let destinationId: string

  before(async () => {
    const receiver = await startReceiver()
    cleanup.push(() => receiver.close())
    // Hundreds of wrong credentials from one address: throttling (hardening-auth.test.ts) would
    // answer 429 after the 20th.
    sluice = await startTestSluice({ authFailuresPerMinute: 0 })
    cleanup.push(() => sluice.destroy())
    sourceA = await sluice.createSource('A')
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'A hooks',
      type: 'webhooks',
      sourceIds: [sourceA.id],
      settings: { webhooks: [{ url: `${receiver.url}/a` }] },
    })
    assert.equal(created.status, 201)
    destinationId = created.body.id
    // One delivery, so /deliveries/:id names a real one.
    const tracked = await send(
      sluice.url,
      '/v1/track',
      { userId: 'u', event: 'E' },
      { writeKey: sourceA.writeKey },
    )
    assert.equal(tracked.status, 200)
    // Settled before any test snapshots the state: a delivery finishing mid-test is not a change the
    // refused requests made.
    await until(
      'the delivery is delivered',
      async () => (await sluice.api('GET', `/api/v1/destinations/${destinationId}`)).body.stats,
      (stats) => stats.delivered === 1,
    )
    const openapi = (await (await fetch(`${sluice.url}/api/openapi.json`)).json()) as any
    operations = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
      )
  })

  /** Signing in and out are the door itself: they take no token (sign-in takes one in its body). */
  const isDoor = (op: { method: string; path: string }) =>
    op.path === '/api/v1/session' && op.method !== 'GET'

  test('the OpenAPI document lists every management route the server has', () => {
    const documented = new Set(operations.map((op) => `${op.method} ${op.path.replace(/\{(\w+)\}/g, ':$1')}`))
    const served = routeTable(sluice.sluice.app.printRoutes({ commonPrefix: false })).filter(
      (route) => route.path.startsWith('/api/v1') && route.method !== 'HEAD',
    )
    assert.ok(served.length >= 14, `only ${served.length} management routes parsed from the route table`)
    const missing = served.filter((route) => !documented.has(`${route.method} ${route.path}`))
    assert.deepEqual(missing, [], 'management routes missing from /api/openapi.json escape the auth checks')
  })

  const credentials: Array<{ case: string; header: () => string | undefined }> = [
    { case: 'no Authorization header', header: () => undefined },
    { case: 'a wrong token', header: () => 'Bearer not-the-admin-token' },
    {
      case: 'the admin token with one character changed',
      header: () => `Bearer ${sluice.adminToken.slice(0, -1)}X`,
    },
    { case: "a source's write key as Bearer", header: () => `Bearer ${sourceA.writeKey}` },
    { case: "a source's write key as Basic (as SDKs send it)", header: () => basic(sourceA.writeKey) },
    { case: 'the admin token as Basic', header: () => basic(sluice.adminToken) },
    { case: 'an empty Bearer', header: () => 'Bearer ' },
  ]

  for (const each of credentials) {
    test(`every management operation answers 401 JSON to ${each.case}, and changes nothing`, async () => {
      const deliveryId = (await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)).body
        .deliveries[0].id
      const fill = (path: string) =>
        path
          .replace('/sources/{id}', `/sources/${sourceA.id}`)
          .replace('/destinations/{id}', `/destinations/${destinationId}`)
          .replace('/deliveries/{id}', `/deliveries/${deliveryId}`)
      const bodies: Record<string, unknown> = {
        'POST /api/v1/sources': { name: 'intruder' },
        'PATCH /api/v1/sources/{id}': { enabled: false },
        'POST /api/v1/destinations': {
          name: 'intruder',
          type: 'webhooks',
          settings: { webhooks: [{ url: 'https://attacker.invalid/' }] },
        },
        'PATCH /api/v1/destinations/{id}': { settings: { webhooks: [{ url: 'https://attacker.invalid/' }] } },
      }
      const before = JSON.stringify([
        (await sluice.api('GET', '/api/v1/sources')).body,
        (await sluice.api('GET', '/api/v1/destinations')).body,
      ])
      let checked = 0
      const guarded = operations.filter((op) => !isDoor(op))
      for (const op of [
        ...guarded,
        ...guarded.filter((o) => o.method === 'GET').map((o) => ({ ...o, method: 'HEAD' })),
      ]) {
        const header = each.header()
        const body = bodies[`${op.method} ${op.path}`]
        const response = await fetch(sluice.url + fill(op.path), {
          method: op.method,
          headers: {
            ...(header === undefined ? {} : { authorization: header }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        const text = await response.text()
        const label = `${op.method} ${op.path} with ${each.case}`
        assert.equal(response.status, 401, `${label}: ${text}`)
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="sluice"/, label)
        if (op.method !== 'HEAD') {
          const error = assertJsonError(
            response.status,
            response.headers.get('content-type') ?? '',
            text,
            label,
          )
          assert.equal(error.code, 'unauthorized', label)
          assert.ok(!text.includes(sourceA.writeKey), `${label}: the write key was echoed`)
        }
        checked++
      }
      assert.ok(checked >= 20, `only ${checked} operations checked`)
      const afterwards = JSON.stringify([
        (await sluice.api('GET', '/api/v1/sources')).body,
        (await sluice.api('GET', '/api/v1/destinations')).body,
      ])
      assert.equal(afterwards, before, 'a refused request changed something')
    })
  }
})

describe('a write key is good for its own source only', () => {
  test('the Tracking API stores under the key’s source and delivers to that source’s destinations only', async () => {
    const hooksA = await startReceiver()
    const hooksB = await startReceiver()
    cleanup.push(
      () => hooksA.close(),
      () => hooksB.close(),
    )
    const sluice = await startTestSluice()
    cleanup.push(() => sluice.destroy())
    const a = await sluice.createSource('A')
    const b = await sluice.createSource('B')
    for (const [source, receiver] of [
      [a, hooksA],
      [b, hooksB],
    ] as const) {
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: source.name,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }] },
      })
      assert.equal(created.status, 201)
    }

    // A's key in the header, B's named in the body and in every item: A's it is.
    const batch = ['m1', 'm2'].map((messageId) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId,
      writeKey: b.writeKey,
    }))
    const viaHeader = await send(
      sluice.url,
      '/v1/batch',
      { writeKey: b.writeKey, batch },
      { writeKey: a.writeKey },
    )
    assert.equal(viaHeader.status, 200, viaHeader.text)
    // A's key in the body only.
    const viaBody = await send(sluice.url, '/v1/track', {
      writeKey: a.writeKey,
      userId: 'u',
      event: 'E',
      messageId: 'm3',
    })
    assert.equal(viaBody.status, 200, viaBody.text)
    // The admin token is not a write key.
    const admin = await send(
      sluice.url,
      '/v1/track',
      { userId: 'u', event: 'E', messageId: 'm4' },
      { writeKey: sluice.adminToken },
    )
    assert.equal(admin.status, 401)
    assert.equal(admin.body.error.code, 'unknown_write_key')

    for (const messageId of ['m1', 'm2', 'm3']) {
      const stored = await sluice.store.getMessage(a.id, messageId)
      assert.ok(stored, `${messageId} stored under A`)
      assert.equal(stored.payload.writeKey, undefined, 'the write key is not stored in the payload')
      assert.equal(await sluice.store.getMessage(b.id, messageId), null, `${messageId} stored under B`)
    }
    assert.equal(await sluice.store.getMessage(a.id, 'm4'), null)
    assert.equal(await sluice.store.countMessages(b.id), 0)
    await until(
      'A’s three messages at A’s receiver',
      () => hooksA.requests.length,
      (n) => n === 3,
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(hooksB.requests.length, 0, 'B’s receiver got A’s messages')
    for (const request of hooksA.requests)
      assert.ok(!request.body.includes(a.writeKey), 'a write key was delivered')
  })
})

describe('the shared secret never leaves Sluice', () => {
  test('not in any response, header, trace-level log line, error message or webhook request, across a full scenario', async (t) => {
    const secret = `sk${'A1b2C3d4E5f6G7h8J9k0'}${Date.now().toString(36)}Zq`
    const secondSecret = `sk${'Zy9Xw8Vu7Ts6Rq5Po4Nm'}${Date.now().toString(36)}Qz`
    const ok = await startReceiver()
    const failing = await startReceiver((_req, res) => res.writeHead(500).end('broken'))
    const refusedPort = await unusedPort()
    cleanup.push(
      () => ok.close(),
      () => failing.close(),
    )
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-secret-'))
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    const sluice = await spawnSluice({
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: 'secret-test-admin-0123456789',
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
      LOG_LEVEL: 'trace',
      SLUICE_RETRY_WINDOW_SECONDS: '1',
      SLUICE_RETRY_BASE_DELAY_MS: '50',
      SLUICE_RETRY_MAX_DELAY_MS: '200',
    })
    cleanup.push(async () => {
      if (sluice.child.exitCode === null) sluice.child.kill('SIGKILL')
    })

    const seen: Array<{ what: string; text: string }> = []
    const call = async (method: string, path: string, body?: unknown, raw?: string) => {
      const response = await fetch(sluice.url + path, {
        method,
        headers: {
          authorization: 'Bearer secret-test-admin-0123456789',
          ...(body === undefined && raw === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(raw !== undefined ? { body: raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const text = await response.text()
      seen.push({ what: `${method} ${path} -> ${response.status} body`, text })
      seen.push({ what: `${method} ${path} headers`, text: JSON.stringify([...response.headers]) })
      return { status: response.status, body: text ? JSON.parse(text) : undefined }
    }

    const source = (await call('POST', '/api/v1/sources', { name: 'secret source' })).body
    const settings = (urls: string[], sharedSecret?: string) => ({
      webhooks: urls.map((url) => ({ url, headers: { 'X-Team': 'growth' } })),
      ...(sharedSecret === undefined ? {} : { sharedSecret }),
    })
    const good = await call('POST', '/api/v1/destinations', {
      name: 'signed',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: settings([`${ok.url}/hook`], secret),
    })
    assert.equal(good.status, 201)
    const bad = await call('POST', '/api/v1/destinations', {
      name: 'signed, failing',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: settings([`${failing.url}/hook`, `http://127.0.0.1:${refusedPort}/hook`], secret),
    })
    assert.equal(bad.status, 201)
    const goodPath = `/api/v1/destinations/${good.body.id}`
    const badPath = `/api/v1/destinations/${bad.body.id}`

    await call('GET', goodPath)
    await call('GET', '/api/v1/destinations')
    await call('PATCH', goodPath, { name: 'renamed' })
    await call('PATCH', goodPath, { settings: settings([`${ok.url}/hook`, `${ok.url}/second`]) })
    await call('POST', `${goodPath}/test`)
    await call('POST', `${badPath}/test`)

    // Traffic: delivered to one destination, dead-lettered at the other (1 s window).
    const tracked = await send(
      sluice.url,
      '/v1/batch',
      { batch: [1, 2, 3].map((n) => ({ type: 'track', userId: 'u', event: 'E', messageId: `s${n}` })) },
      { writeKey: source.writeKey },
    )
    assert.equal(tracked.status, 200)
    await until(
      'deliveries to settle: 3 delivered, 3 dead-lettered',
      async () => [
        (await call('GET', `${goodPath}/deliveries?status=delivered`)).body.deliveries.length,
        (await call('GET', `${badPath}/deliveries?status=failed`)).body.deliveries.length,
      ],
      ([delivered, failed]) => delivered === 3 && failed === 3,
      10_000,
      100,
    )
    const deadLetters = (await call('GET', `${badPath}/deliveries`)).body.deliveries
    await call('GET', `/api/v1/deliveries/${deadLetters[0].id}`)
    await call('POST', `/api/v1/deliveries/${deadLetters[0].id}/replay`)
    await call('POST', `${badPath}/replay?status=failed`)
    await call('GET', `${goodPath}/stats`)
    await call('GET', `${badPath}/stats`)

    // Replacing the secret, then refused requests that carry it.
    assert.equal((await call('PATCH', goodPath, { settings: { sharedSecret: secondSecret } })).status, 200)
    const refusals: Array<[string, string, unknown, string?]> = [
      ['PATCH', goodPath, { settings: { sharedSecret: secret, webhooks: [{ url: 'ftp://x.invalid/' }] } }],
      [
        'POST',
        '/api/v1/destinations',
        {
          name: 'x',
          type: 'webhooks',
          sourceIds: ['src_nope'],
          settings: settings(['https://x.invalid/'], secret),
        },
      ],
      [
        'POST',
        '/api/v1/destinations',
        {
          name: 'x',
          type: 'webhooks',
          settings: { ...settings(['https://x.invalid/']), sharedSecert: secret },
        },
      ],
      [
        'POST',
        '/api/v1/destinations',
        { name: 'x', type: 'webhooks', sharedSecret: secret, settings: settings(['https://x.invalid/']) },
      ],
      [
        'POST',
        '/api/v1/destinations',
        {
          name: 'x',
          type: 'webhooks',
          settings: settings(['https://x.invalid/'], `${'x'.repeat(1000)}${secret}`),
        },
      ],
      [
        'POST',
        '/api/v1/destinations',
        {
          name: 'x',
          type: 'webhooks',
          settings: { ...settings(['https://x.invalid/']), sharedSecret: [secret] },
        },
      ],
      [
        'POST',
        '/api/v1/destinations',
        { name: secret.repeat(10), type: 'webhooks', settings: settings(['https://x.invalid/'], secret) },
      ],
      [
        'POST',
        '/api/v1/destinations',
        { name: 'x', type: 'Webhooks', settings: settings(['https://x.invalid/'], secret) },
      ],
      ['PATCH', '/api/v1/destinations/dst_missing', { settings: { sharedSecret: secret } }],
      ['PATCH', goodPath, undefined, `{"settings":{"sharedSecret":${secret}}}`], // forgot the quotes
      ['PATCH', goodPath, undefined, `{"settings":{"sharedSecret":"${secret}"`], // cut short
      ['PATCH', goodPath, undefined, `{"settings":{"sharedSecret":"${secret}\u0001"}}`], // control character
      ['PATCH', goodPath, undefined, `{"settings": {"sharedSecret": "${secret}"} x}`],
      ['PATCH', goodPath, undefined, `[x, "${secret}"]`],
    ]
    for (const [method, path, body, raw] of refusals) {
      const response = await call(method, path, body, raw)
      assert.ok(response.status >= 400 && response.status < 500, `${method} ${path}: ${response.status}`)
    }
    await call('DELETE', badPath)

    // The secrets were in force: the receiver's signatures are HMACs under them.
    const signed = ok.requests.filter((r) => r.headers['x-signature'])
    assert.ok(signed.length >= 4)
    for (const request of signed) {
      const expected = [secret, secondSecret].map((key) => opensslHmacSha1(request.body, key))
      assert.ok(
        expected.includes(String(request.headers['x-signature'])),
        'X-Signature is the HMAC under the secret',
      )
    }

    sluice.child.kill('SIGTERM')
    assert.equal(await sluice.exited, 0)
    const log = sluice.output()
    const logLines = log.split('\n').filter((line) => line.startsWith('{'))
    // The logger ran at trace level: debug lines (level 20) and every request's lines are there.
    assert.ok(
      logLines.some((line) => line.includes('"level":20')),
      'debug-level lines were logged',
    )
    assert.ok(
      logLines.some((line) => line.includes('incoming request')),
      'requests were logged',
    )
    assert.ok(logLines.length >= 50, `only ${logLines.length} log lines`)
    seen.push({ what: 'the log (stdout, trace level)', text: log })
    for (const receiver of [ok, failing]) {
      for (const request of receiver.requests) {
        seen.push({
          what: `a webhook request to ${request.url}`,
          text: JSON.stringify(request.rawHeaders) + request.body.toString('utf8'),
        })
      }
    }

    // Neither secret, nor any 10-character piece of one (a truncated echo), appears anywhere.
    const pieces = [secret, secondSecret].flatMap((key) =>
      Array.from({ length: key.length - 9 }, (_, i) => key.slice(i, i + 10)),
    )
    for (const { what, text } of seen) {
      const leaked = pieces.find((piece) => text.includes(piece))
      assert.equal(
        leaked,
        undefined,
        `the shared secret (or part of it) appeared in ${what}: …${text.slice(Math.max(0, text.indexOf(leaked ?? '') - 80), text.indexOf(leaked ?? '') + 80)}…`,
      )
    }
    t.diagnostic(
      `secrets: ${seen.filter((s) => s.what.endsWith('body')).length} responses, ${logLines.length} trace-level log lines and ` +
        `${ok.requests.length + failing.requests.length} webhook requests searched; no piece of either secret found`,
    )
  })
})

describe('static headers with CR/LF or reserved names are refused', () => {
  let sluice: TestSluice
  let sourceId: string
  let destinationPath: string
  before(async () => {
    sluice = await startTestSluice()
    cleanup.push(() => sluice.destroy())
    sourceId = (await sluice.createSource('Headers')).id
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'headers',
      type: 'webhooks',
      sourceIds: [sourceId],
      settings: { webhooks: [{ url: 'https://hooks.example.invalid/h', headers: { 'X-Team': 'growth' } }] },
      enabled: false,
    })
    assert.equal(created.status, 201)
    destinationPath = `/api/v1/destinations/${created.body.id}`
  })

  const casings = (name: string) => [...new Set([name, name.toLowerCase(), name.toUpperCase()])]
  const refused: Array<{ case: string; headers: Record<string, unknown>; message: RegExp }> = [
    ...RESERVED_HEADER_NAMES.flatMap((name) =>
      casings(name).map((spelling) => ({
        case: `reserved name ${spelling}`,
        headers: { [spelling]: 'x' },
        message: /set by Sluice or by the HTTP connection/,
      })),
    ),
    ...['a\r\nX-Injected: 1', 'a\nX-Injected: 1', 'a\rb', '\r\n', 'value\n', '\r\n\r\nGET / HTTP/1.1'].map(
      (value) => ({
        case: `value ${JSON.stringify(value)}`,
        headers: { 'X-Value': value },
        message: /line break/,
      }),
    ),
    ...['X-A\r\nX-B', 'X-A\n', '\rX-A', 'X-A: b'].map((name) => ({
      case: `name ${JSON.stringify(name)}`,
      headers: { [name]: 'x' },
      message: /not a legal HTTP header name/,
    })),
    {
      case: 'value with U+2028 (a line separator elsewhere)',
      headers: { 'X-Value': 'a\u2028b' },
      message: /printable ASCII/,
    },
    { case: 'value with NEL U+0085', headers: { 'X-Value': 'a\u0085b' }, message: /printable ASCII/ },
  ]

  test(`${refused.length} refusals on create and on update, each naming the header; nothing is stored`, async () => {
    const before = await sluice.api('GET', destinationPath)
    const destinationsBefore = (await sluice.api('GET', '/api/v1/destinations')).body.destinations.length
    for (const each of refused) {
      const settings = { webhooks: [{ url: 'https://hooks.example.invalid/h', headers: each.headers }] }
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: 'refused',
        type: 'webhooks',
        sourceIds: [sourceId],
        settings,
      })
      const updated = await sluice.api('PATCH', destinationPath, { settings })
      for (const [what, response] of [
        ['create', created],
        ['update', updated],
      ] as const) {
        assert.equal(response.status, 400, `${what}, ${each.case}: ${JSON.stringify(response.body)}`)
        assert.equal(response.body.error.code, 'validation_failed')
        assert.match(response.body.error.field, /^\/settings\/webhooks\/0\/headers\//, each.case)
        assert.match(response.body.error.message, each.message, each.case)
      }
    }
    assert.equal(
      (await sluice.api('GET', '/api/v1/destinations')).body.destinations.length,
      destinationsBefore,
    )
    const afterwards = await sluice.api('GET', destinationPath)
    assert.deepEqual(afterwards.body.settings, before.body.settings)
    assert.equal(afterwards.body.updatedAt, before.body.updatedAt)
  })
})
