/**
 * Segment's browser SDK, analytics.js (`@segment/analytics-next`, its npm UMD build, unmodified), in
 * real Chromium, configured with only a write key and Sluice's URL as its `cdnURL`: it loads its
 * settings from Sluice and sends every call to Sluice's short paths, and each call reaches a Webhooks
 * receiver once, in the documented shape, signed.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { until } from '../reliability/helpers.ts'
import { assertCommonShape, type Harness, onlyOne, startHarness } from './harness.ts'

const HOUR = 3_600_000

let harness: Harness
before(async () => {
  harness = await startHarness()
})
after(() => harness.close())

/** Calls a method of the page's `window.analytics` and waits for the SDK to have sent it. */
function call(method: string, ...args: unknown[]): [string, unknown[]] {
  return [method, args]
}

async function run(opened: { page: import('playwright-core').Page }, calls: [string, unknown[]][]) {
  await opened.page.evaluate(async (list) => {
    const analytics = (globalThis as any).analytics
    for (const [method, args] of list) await analytics[method](...args)
  }, calls)
}

test('every call type arrives once, in the delivered shape, signed, on the server clock', async () => {
  const site = await harness.site('Segment website')
  // The visitor's clock is three hours fast: Sluice corrects each timestamp with sentAt.
  const opened = await harness.open('segment', site.source, { clockOffsetMs: 3 * HOUR })
  const userAgent = await opened.page.evaluate(() => (globalThis as any).navigator.userAgent as string)
  await run(opened, [
    // A visitor who signs up: the anonymous id is aliased to the new user id, then identified. (Once a
    // user is identified, analytics.js sends its id as the alias's userId whatever `to` says.)
    call('alias', 'user-42'),
    call('identify', 'user-42', { plan: 'pro', email: 'ada@example.com' }),
    call('track', 'Order Completed', { total: 12.5, currency: 'EUR' }),
    call('page', 'Docs', 'Getting started', { section: 'intro' }),
    call('group', 'acme', { employees: 5 }),
    call('screen', 'App', 'Settings', { tab: 'privacy' }),
  ])
  const deliveries = await site.settled(6)
  assert.equal(deliveries.length, 6, 'each call is delivered exactly once')
  for (const delivery of deliveries) assertCommonShape(delivery, userAgent)

  const identify = onlyOne(deliveries, 'identify').body
  assert.equal(identify.userId, 'user-42')
  assert.deepEqual(identify.traits, { plan: 'pro', email: 'ada@example.com' })
  const track = onlyOne(deliveries, 'track').body
  assert.equal(track.userId, 'user-42')
  assert.equal(track.event, 'Order Completed')
  assert.deepEqual(track.properties, { total: 12.5, currency: 'EUR' })
  const page = onlyOne(deliveries, 'page').body
  assert.equal(page.name, 'Getting started')
  assert.equal(page.category, 'Docs')
  assert.equal(page.properties.path, '/segment.html')
  assert.equal(page.properties.title, 'Segment page')
  assert.match(page.properties.url, /^http:\/\/127\.0\.0\.1:\d+\/segment\.html\?/)
  assert.equal(page.properties.section, 'intro')
  const group = onlyOne(deliveries, 'group').body
  assert.equal(group.groupId, 'acme')
  assert.deepEqual(group.traits, { employees: 5 })
  const screen = onlyOne(deliveries, 'screen').body
  assert.equal(screen.name, 'Settings')
  const alias = onlyOne(deliveries, 'alias').body
  assert.equal(alias['Previous ID'], alias.anonymousId)
  assert.equal(alias['User ID'], 'user-42')
  assert.equal('userId' in alias, false)

  // The SDK used the settings Sluice served: its own short paths on Sluice, each answered 200.
  const posts = opened.sluiceRequests.filter((request) => request.method() === 'POST')
  assert.deepEqual(
    posts.map((request) => new URL(request.url()).pathname),
    ['/v1/a', '/v1/i', '/v1/t', '/v1/p', '/v1/g', '/v1/s'],
  )
  for (const post of posts) {
    assert.equal((await post.response())?.status(), 200)
    assert.equal(post.headers()['content-type'], 'text/plain')
    assert.match(post.headers().authorization ?? '', /^Basic /)
  }
  // Stored: the browser's own (fast) clock is kept as originalTimestamp; timestamp is corrected.
  const stored = await harness.sluice.store.getMessage(site.source.id, track.messageId)
  assert.ok(stored)
  const original = Date.parse(stored.payload.originalTimestamp as string)
  assert.ok(Math.abs(original - (Date.now() + 3 * HOUR)) < 60_000, 'originalTimestamp is the browser clock')
})

test('batching mode sends one request to /v1/b for a full batch', async () => {
  const site = await harness.site('Segment batching')
  const opened = await harness.open('segment', site.source, {
    query: { batching: JSON.stringify({ size: 4, timeout: 60_000 }) },
  })
  await run(opened, [
    call('identify', 'user-7', { plan: 'free' }),
    call('track', 'Viewed', { n: 1 }),
    call('track', 'Viewed', { n: 2 }),
    call('page'),
  ])
  const deliveries = await site.settled(4)
  assert.deepEqual(deliveries.map((delivery) => delivery.body.type).sort(), [
    'identify',
    'page',
    'track',
    'track',
  ])
  assert.deepEqual(
    deliveries
      .filter((delivery) => delivery.body.type === 'track')
      .map((delivery) => delivery.body.properties.n)
      .sort(),
    [1, 2],
  )
  const posts = opened.sluiceRequests.filter((request) => request.method() === 'POST')
  assert.deepEqual(
    posts.map((request) => new URL(request.url()).pathname),
    ['/v1/b'],
  )
  assert.equal((await posts[0]!.response())?.status(), 200)
})

test('near the limits: the SDK splits batches under 500 KB, and a call over 32 KB is rejected alone', async () => {
  const site = await harness.site('Segment large batches')
  const opened = await harness.open('segment', site.source, {
    query: { batching: JSON.stringify({ size: 100, timeout: 2_000 }) },
  })
  // 30 calls of about 30 KB: more than one Tracking API request can hold. One of them is over 32 KB.
  const calls: [string, unknown[]][] = []
  for (let n = 0; n < 30; n++) {
    calls.push(call('track', 'Uploaded', { n, blob: 'x'.repeat(n === 7 ? 40_000 : 30_000) }))
  }
  await run(opened, calls)
  const deliveries = await site.settled(29)
  assert.deepEqual(
    deliveries.map((delivery) => delivery.body.properties.n).sort((a, b) => a - b),
    [...Array(30).keys()].filter((n) => n !== 7),
  )
  const posts = opened.sluiceRequests.filter((request) => request.method() === 'POST')
  assert.ok(posts.length >= 2, 'split into several requests')
  let rejected = 0
  for (const post of posts) {
    assert.ok(Buffer.byteLength(post.postData() ?? '') <= 500 * 1024, 'each request is within 500 KB')
    const response = await post.response()
    assert.ok(response)
    assert.equal(response.status(), 200)
    rejected += ((await response.json()) as { rejected?: unknown[] }).rejected?.length ?? 0
  }
  assert.equal(rejected, 1, 'the 40 KB call is the one rejected')
})

test('leaving the page flushes the pending batch (keepalive)', async () => {
  const site = await harness.site('Segment unload')
  // A batch that would otherwise wait a minute.
  const opened = await harness.open('segment', site.source, {
    query: { batching: JSON.stringify({ size: 100, timeout: 60_000 }) },
  })
  await run(opened, [
    call('track', 'Clicked Checkout', { step: 1 }),
    call('track', 'Clicked Pay', { step: 2 }),
  ])
  assert.equal(opened.sluiceRequests.filter((request) => request.method() === 'POST').length, 0)
  await opened.page.goto(`${harness.website.url}/elsewhere.html`)
  const deliveries = await site.settled(2)
  assert.deepEqual(deliveries.map((delivery) => delivery.body.event).sort(), [
    'Clicked Checkout',
    'Clicked Pay',
  ])
})

test('a disabled write key: each call is refused once, the SDK does not retry, nothing is stored', async () => {
  const site = await harness.site('Segment disabled')
  const opened = await harness.open('segment', site.source)
  await until(
    'the settings to load',
    () => opened.sluiceRequests.filter((request) => request.url().includes('/settings')).length,
    (count) => count === 1,
  )
  const disabled = await harness.sluice.api('PATCH', `/api/v1/sources/${site.source.id}`, { enabled: false })
  assert.equal(disabled.status, 200)
  await run(opened, [call('track', 'After disabling', {})])
  // analytics.js retries a retryable failure after about a second; give it several.
  await new Promise((resolve) => setTimeout(resolve, 4_000))
  const posts = opened.sluiceRequests.filter((request) => request.method() === 'POST')
  assert.equal(posts.length, 1, 'one attempt, no retries')
  assert.equal((await posts[0]!.response())?.status(), 401)
  const stats = await harness.sluice.api('GET', `/api/v1/sources/${site.source.id}`)
  assert.equal(stats.body.stats?.accepted ?? 0, 0)
  assert.equal(site.deliveries().length, 0)
})

test('an unknown write key: the settings answer 404 and the SDK sends nothing', async () => {
  const site = await harness.site('Segment unknown key')
  const opened = await harness.open('segment', { ...site.source, writeKey: 'not-a-write-key' })
  await until(
    'the settings request',
    () => opened.sluiceRequests.filter((request) => request.url().includes('/settings')),
    (requests) => requests.length === 1,
  )
  const settings = opened.sluiceRequests[0]!
  assert.equal((await settings.response())?.status(), 404)
  // Not awaited: with no settings the SDK never loads, so its calls never settle.
  await opened.page.evaluate(() => {
    ;(globalThis as any).analytics.track('Never sent')
  })
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  assert.equal(opened.sluiceRequests.filter((request) => request.method() === 'POST').length, 0)
})
