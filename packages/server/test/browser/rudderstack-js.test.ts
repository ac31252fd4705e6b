/**
 * RudderStack's browser SDK (`@rudderstack/analytics-js`, its npm "bundled" ESM build, unmodified) in
 * real Chromium, loaded with a write key and Sluice's URL as both its data plane URL and its
 * `configUrl`: it loads its source configuration from Sluice and sends every call to Sluice, and each
 * call reaches a Webhooks receiver once, in the documented shape, signed.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Page } from 'playwright-core'
import { until } from '../reliability/helpers.ts'
import { assertCommonShape, type Harness, type OpenPage, onlyOne, startHarness } from './harness.ts'

const HOUR = 3_600_000

let harness: Harness
before(async () => {
  harness = await startHarness()
})
after(() => harness.close())

/** Runs `calls` on the page's `rudderanalytics` once the SDK has loaded its configuration. */
async function run(page: Page, calls: [string, ...unknown[]][]): Promise<void> {
  await page.evaluate(async (list) => {
    const global = globalThis as any
    await global.rudderReady
    for (const [method, ...args] of list) global.rudderanalytics[method](...args)
  }, calls)
}

function posts(opened: OpenPage) {
  return opened.sluiceRequests.filter((request) => request.method() === 'POST')
}

test('every call type arrives once, in the delivered shape, signed, on the server clock', async () => {
  const site = await harness.site('RudderStack website')
  // The visitor's clock is two hours slow: Sluice corrects each timestamp with sentAt.
  const opened = await harness.open('rudderstack', site.source, { clockOffsetMs: -2 * HOUR })
  const userAgent = await opened.page.evaluate(() => (globalThis as any).navigator.userAgent as string)
  await run(opened.page, [
    ['page', 'Docs', 'Getting started', { section: 'intro' }],
    ['alias', 'user-42'],
    ['identify', 'user-42', { plan: 'pro', email: 'ada@example.com' }],
    ['track', 'Order Completed', { total: 12.5, currency: 'EUR' }],
    ['group', 'acme', { employees: 5 }],
  ])
  const deliveries = await site.settled(5)
  assert.equal(deliveries.length, 5, 'each call is delivered exactly once')
  for (const delivery of deliveries) assertCommonShape(delivery, userAgent)

  const page = onlyOne(deliveries, 'page').body
  assert.equal(page.userId, null, 'an anonymous page view has no user id')
  assert.equal(page.name, 'Getting started')
  assert.equal(page.category, 'Docs')
  assert.equal(page.properties.path, '/rudderstack.html')
  assert.equal(page.properties.title, 'RudderStack page')
  assert.match(page.properties.url, /^http:\/\/127\.0\.0\.1:\d+\/rudderstack\.html\?/)
  assert.equal(page.properties.section, 'intro')
  const alias = onlyOne(deliveries, 'alias').body
  assert.equal(alias['Previous ID'], alias.anonymousId)
  assert.equal(alias['User ID'], 'user-42')
  assert.equal('userId' in alias, false)
  const identify = onlyOne(deliveries, 'identify').body
  assert.equal(identify.userId, 'user-42')
  assert.deepEqual(identify.traits, { plan: 'pro', email: 'ada@example.com' })
  const track = onlyOne(deliveries, 'track').body
  assert.equal(track.userId, 'user-42')
  assert.equal(track.event, 'Order Completed')
  assert.deepEqual(track.properties, { total: 12.5, currency: 'EUR' })
  const group = onlyOne(deliveries, 'group').body
  assert.equal(group.userId, 'user-42')
  assert.equal(group.groupId, 'acme')
  assert.deepEqual(group.traits, { employees: 5 })

  const paths = opened.sluiceRequests.map(
    (request) => `${request.method()} ${new URL(request.url()).pathname}`,
  )
  assert.deepEqual(paths, [
    'GET /sourceConfig/',
    'POST /v1/page',
    'POST /v1/alias',
    'POST /v1/identify',
    'POST /v1/track',
    'POST /v1/group',
  ])
  for (const post of posts(opened)) {
    assert.equal((await post.response())?.status(), 200)
    assert.match(post.headers().authorization ?? '', /^Basic /)
  }
  // RudderStack sends the event time as originalTimestamp (no timestamp): kept, and corrected.
  const stored = await harness.sluice.store.getMessage(site.source.id, track.messageId)
  assert.ok(stored)
  const original = Date.parse(stored.payload.originalTimestamp as string)
  assert.ok(Math.abs(original - (Date.now() - 2 * HOUR)) < 60_000, 'originalTimestamp is the browser clock')
})

test('beacon mode: leaving the page sends the queued calls by navigator.sendBeacon', async () => {
  const site = await harness.site('RudderStack beacon')
  const opened = await harness.open('rudderstack', site.source, { query: { beacon: '1' } })
  await run(opened.page, [
    ['track', 'Clicked Checkout', { step: 1 }],
    ['track', 'Clicked Pay', { step: 2 }],
  ])
  assert.equal(posts(opened).length, 0, 'the beacon queue waits for the page to be left')
  await opened.page.goto(`${harness.website.url}/elsewhere.html`)
  const deliveries = await site.settled(2)
  assert.deepEqual(deliveries.map((delivery) => delivery.body.event).sort(), [
    'Clicked Checkout',
    'Clicked Pay',
  ])
  for (const delivery of deliveries) assert.ok(delivery.signed)
})

test('a write key disabled after loading: each call is refused once, not retried, nothing is stored', async () => {
  const site = await harness.site('RudderStack disabled later')
  const opened = await harness.open('rudderstack', site.source)
  await opened.page.evaluate(() => (globalThis as any).rudderReady)
  const disabled = await harness.sluice.api('PATCH', `/api/v1/sources/${site.source.id}`, { enabled: false })
  assert.equal(disabled.status, 200)
  await run(opened.page, [['track', 'After disabling', {}]])
  await until(
    'the attempt',
    () => posts(opened).length,
    (count) => count >= 1,
  )
  // The SDK's first retry would come after one second; give it several.
  await new Promise((resolve) => setTimeout(resolve, 4_000))
  assert.equal(posts(opened).length, 1, 'one attempt, no retries')
  assert.equal((await posts(opened)[0]!.response())?.status(), 401)
  const source = await harness.sluice.api('GET', `/api/v1/sources/${site.source.id}`)
  assert.equal(source.body.stats.accepted, 0)
  assert.equal(site.deliveries().length, 0)
})

test('a disabled source: the SDK reads enabled: false from its configuration and sends nothing', async () => {
  const site = await harness.site('RudderStack disabled')
  await harness.sluice.api('PATCH', `/api/v1/sources/${site.source.id}`, { enabled: false })
  const opened = await harness.open('rudderstack', site.source)
  await until(
    'the configuration request',
    () => opened.sluiceRequests.filter((request) => request.url().includes('/sourceConfig')),
    (requests) => requests.length === 1,
  )
  assert.equal((await opened.sluiceRequests[0]!.response())?.status(), 200)
  await opened.page.evaluate(() => {
    ;(globalThis as any).rudderanalytics.track('Never sent')
  })
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  assert.equal(posts(opened).length, 0)
  assert.ok(
    opened.console.some((line) => /disabled/i.test(line)),
    `the SDK says why: ${opened.console.join('\n')}`,
  )
})
