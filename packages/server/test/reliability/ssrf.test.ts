/**
 * SSRF end to end: destinations pointing at loopback, private, link-local, CGNAT and
 * cloud-metadata addresses, in every spelling (IPv4-mapped IPv6, decimal, octal, hex, short forms, a
 * host name resolving to loopback), through a real Sluice with `allowPrivateDestinations: false`:
 * no connection reaches any local listener, by delivery or by test send.
 *
 * Listeners ("traps") run on 127.0.0.1, 127.0.0.2 and ::1, so refusals there are observed directly.
 * Other ranges cannot have a listener here; for them the delivery's attempt must say `ssrf`, which the
 * guard only produces before dialling. This test never lets Sluice dial a non-loopback address: every
 * such URL is first checked with the connector's own `refusalForHost`, and an address it would not
 * refuse fails the test before any destination is created.
 *
 * A redirect to loopback is never followed (shown with private destinations allowed, so the
 * redirecting endpoint itself is reachable). With `allowPrivateDestinations: true` the loopback
 * listeners do get the messages: the refusals above are the guard's doing, not unreachable sockets.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, test } from 'node:test'
import { refusalForHost } from '../../src/deliver/ssrf.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from './helpers.ts'

interface Trap {
  host: string
  port: number
  /** TCP connections accepted: must stay 0 while the guard is on. */
  connections: number
  /** Request paths received. */
  paths: string[]
  close(): Promise<void>
}

/** An HTTP listener on `host` that counts connections and records request paths, answering 200. */
async function trap(
  host: string,
  respond?: (path: string) => { status: number; location?: string },
): Promise<Trap> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      result.paths.push(req.url ?? '')
      const answer = respond?.(req.url ?? '') ?? { status: 200 }
      res.writeHead(answer.status, answer.location ? { location: answer.location } : {}).end('trap')
    })
  })
  const result: Trap = {
    host,
    port: 0,
    connections: 0,
    paths: [],
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  server.on('connection', () => {
    result.connections++
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  result.port = (server.address() as AddressInfo).port
  return result
}

const cleanup: Array<() => Promise<void>> = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

let v4: Trap
let v4Other: Trap
let v6: Trap

async function startTraps(): Promise<void> {
  const traps = [await trap('127.0.0.1'), await trap('127.0.0.2'), await trap('::1')]
  ;[v4, v4Other, v6] = traps as [Trap, Trap, Trap]
  for (const each of traps) cleanup.push(() => each.close())
}

/** Loopback in every spelling; each reaches one of the traps if dialled. */
function loopbackUrls(): Array<{ url: string; trap: () => Trap; path: string }> {
  const p = () => v4.port
  const entries: Array<[string, () => Trap]> = [
    [`http://127.0.0.1:${p()}/plain`, () => v4],
    [`http://127.1:${p()}/short`, () => v4],
    [`http://2130706433:${p()}/decimal`, () => v4],
    [`http://0177.0.0.1:${p()}/octal`, () => v4],
    [`http://0x7f.0.0.1:${p()}/hex-octet`, () => v4],
    [`http://0x7f000001:${p()}/hex`, () => v4],
    [`http://017700000001:${p()}/octal-32`, () => v4],
    [`http://localhost:${p()}/localhost`, () => v4],
    [`http://[::ffff:127.0.0.1]:${p()}/mapped`, () => v4],
    [`http://[::ffff:7f00:1]:${p()}/mapped-hex`, () => v4],
    [`http://[0:0:0:0:0:ffff:127.0.0.1]:${p()}/mapped-long`, () => v4],
    [`http://0.0.0.0:${p()}/unspecified`, () => v4],
    [`http://0:${p()}/zero`, () => v4],
    [`http://127.0.0.2:${v4Other.port}/other-loopback`, () => v4Other],
    [`http://2130706434:${v4Other.port}/other-loopback-decimal`, () => v4Other],
    [`http://[::1]:${v6.port}/v6`, () => v6],
    [`http://[0:0:0:0:0:0:0:1]:${v6.port}/v6-long`, () => v6],
    [`http://[::]:${v6.port}/v6-unspecified`, () => v6],
  ]
  return entries.map(([url, target]) => ({ url, trap: target, path: new URL(url).pathname }))
}

/** Private, link-local, CGNAT and metadata addresses: never dialled here, refused by the guard. */
const UNREACHABLE_PRIVATE = [
  'http://10.0.0.1/private-10',
  'http://10.255.255.254:8080/private-10-top',
  'http://167772161/private-10-decimal',
  'http://012.0.0.1/private-10-octal',
  'http://0xa.0.0.1/private-10-hex',
  'http://172.16.0.1/private-172-16',
  'http://172.31.255.254/private-172-31',
  'http://192.168.0.1/private-192-168',
  'http://192.168.255.254:8443/private-192-168-top',
  'http://169.254.169.254/latest/meta-data/',
  'http://0xa9fea9fe/metadata-hex',
  'http://2852039166/metadata-decimal',
  'http://[::ffff:169.254.169.254]/metadata-mapped',
  'http://[::ffff:a9fe:a9fe]/metadata-mapped-hex',
  'http://[fd00:ec2::254]/metadata-aws-v6',
  'http://[64:ff9b::a9fe:a9fe]/metadata-nat64',
  'http://100.100.100.200/metadata-alibaba',
  'http://169.254.0.1/link-local',
  'http://[fe80::1]/link-local-v6',
  'http://100.64.0.1/cgnat',
  'http://100.127.255.254/cgnat-top',
  'http://[::ffff:10.0.0.1]/private-mapped',
  'http://[::ffff:192.168.1.1]/private-mapped-192',
  'http://[fd12:3456::1]/unique-local-v6',
  'http://[2002:a9fe:a9fe::1]/6to4-metadata',
  'https://10.1.2.3/private-https',
  'http://224.0.0.1/multicast',
]

/** Groups URLs into destinations of at most 5, all connected to one source; sends one message. */
async function deliverTo(
  sluice: TestSluice,
  urls: string[],
): Promise<{ destinationIds: string[]; messageId: string }> {
  const source = await sluice.createSource('SSRF')
  const destinationIds: string[] = []
  for (let i = 0; i < urls.length; i += 5) {
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: `ssrf ${i / 5}`,
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: urls.slice(i, i + 5).map((url) => ({ url })) },
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    destinationIds.push(created.body.id)
  }
  const messageId = `ssrf-${Date.now()}`
  const response = await send(
    sluice.url,
    '/v1/track',
    { userId: 'u', event: 'E', messageId },
    { writeKey: source.writeKey },
  )
  assert.equal(response.status, 200)
  return { destinationIds, messageId }
}

async function finalDeliveries(sluice: TestSluice, destinationIds: string[]): Promise<any[]> {
  return until(
    'every delivery to be final',
    async () =>
      (
        await Promise.all(
          destinationIds.map(
            async (id) => (await sluice.api('GET', `/api/v1/destinations/${id}/deliveries`)).body.deliveries,
          ),
        )
      ).flat(),
    (list: any[]) =>
      list.length === destinationIds.length &&
      list.every((d) => d.status === 'delivered' || d.status === 'failed'),
    10_000,
  )
}

describe('SSRF', () => {
  test('with private destinations refused, no request reaches loopback, private, link-local, CGNAT or metadata addresses', async (t) => {
    await startTraps()
    // Guarantee first: the connector refuses each non-loopback address before dialling it.
    for (const url of UNREACHABLE_PRIVATE) {
      assert.ok(refusalForHost(new URL(url).hostname), `${url} would be dialled: the guard misses it`)
    }
    const sluice = await startTestSluice({
      allowPrivateDestinations: false,
      retry: { baseDelayMs: 20, maxDelayMs: 50, windowMs: 2_000 },
    })
    cleanup.push(() => sluice.destroy())
    const loopback = loopbackUrls()
    const urls = [...loopback.map((entry) => entry.url), ...UNREACHABLE_PRIVATE]
    const { destinationIds } = await deliverTo(sluice, urls)

    const deliveries = await finalDeliveries(sluice, destinationIds)
    const attempts = deliveries.flatMap((d) => d.attempts)
    for (const delivery of deliveries) {
      assert.equal(delivery.status, 'failed')
      assert.equal(delivery.deadLettered, false, 'a refusal is final, not retried until the window ends')
      assert.equal(delivery.attemptCount, 1)
    }
    assert.deepEqual(attempts.map((a) => a.url).sort(), [...urls].sort())
    for (const attempt of attempts) {
      assert.equal(attempt.errorKind, 'ssrf', `${attempt.url}: ${attempt.errorText}`)
      assert.equal(attempt.statusCode, null)
      assert.match(attempt.errorText, /Refused to connect to .*SLUICE_ALLOW_PRIVATE_DESTINATIONS=true/)
    }

    // The test send refuses the same way.
    for (const id of destinationIds) {
      const tested = await sluice.api('POST', `/api/v1/destinations/${id}/test`)
      assert.equal(tested.status, 200)
      assert.equal(tested.body.ok, false)
      for (const result of tested.body.results) assert.equal(result.errorKind, 'ssrf', result.url)
    }

    // Nothing connected to any loopback listener, by any spelling.
    assert.deepEqual(
      [v4, v4Other, v6].map((each) => ({
        host: each.host,
        connections: each.connections,
        paths: each.paths,
      })),
      [v4, v4Other, v6].map((each) => ({ host: each.host, connections: 0, paths: [] })),
    )
    t.diagnostic(
      `ssrf: ${loopback.length} loopback spellings (observed: 0 connections) and ${UNREACHABLE_PRIVATE.length} private/link-local/CGNAT/metadata URLs refused, by delivery and by test send`,
    )
  })

  test('a redirect to loopback or metadata is never followed: the delivery fails as a redirect, the target gets nothing', async () => {
    const target = await trap('127.0.0.1')
    const redirects: Record<string, { status: number; location: string }> = {
      '/302': { status: 302, location: `http://127.0.0.1:${target.port}/from-302` },
      '/301': { status: 301, location: `http://localhost:${target.port}/from-301` },
      '/307': { status: 307, location: `http://[::ffff:127.0.0.1]:${target.port}/from-307` },
      '/308': { status: 308, location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
      '/303': { status: 303, location: `http://2130706433:${target.port}/from-303` },
    }
    const redirector = await trap('127.0.0.1', (path) => redirects[path] ?? { status: 404 })
    cleanup.push(
      () => target.close(),
      () => redirector.close(),
    )
    // Private destinations allowed, so the redirecting endpoint is reachable at all.
    const sluice = await startTestSluice({ retry: { baseDelayMs: 20, maxDelayMs: 50, windowMs: 2_000 } })
    cleanup.push(() => sluice.destroy())
    const urls = Object.keys(redirects).map((path) => `http://127.0.0.1:${redirector.port}${path}`)
    const { destinationIds } = await deliverTo(sluice, urls)
    const [delivery] = await finalDeliveries(sluice, destinationIds)
    assert.equal(delivery.status, 'failed')
    assert.equal(delivery.attemptCount, 1, 'a redirect is final: not retried')
    for (const attempt of delivery.attempts) {
      assert.equal(attempt.errorKind, 'redirect', attempt.url)
      assert.match(attempt.errorText, /never follows redirects/)
    }
    const tested = await sluice.api('POST', `/api/v1/destinations/${destinationIds[0]}/test`)
    assert.deepEqual(
      tested.body.results.map((r: any) => r.errorKind),
      urls.map(() => 'redirect'),
    )
    assert.equal(
      redirector.paths.length,
      2 * urls.length,
      'each redirect URL was asked twice (delivery, test)',
    )
    assert.equal(target.connections, 0, 'the redirect target was contacted')
  })

  test('with private destinations allowed, the same loopback spellings do receive the message', async () => {
    await startTraps()
    const sluice = await startTestSluice({ allowPrivateDestinations: true })
    cleanup.push(() => sluice.destroy())
    const loopback = loopbackUrls()
    const { destinationIds } = await deliverTo(
      sluice,
      loopback.map((entry) => entry.url),
    )
    const deliveries = await finalDeliveries(sluice, destinationIds)
    for (const delivery of deliveries) assert.equal(delivery.status, 'delivered')
    for (const entry of loopback) {
      assert.ok(
        entry.trap().paths.includes(entry.path),
        `${entry.url} did not arrive at ${entry.trap().host}`,
      )
    }
  })
})
