/**
 * What the browser SDK tests share: a real Sluice on loopback, a "website" (a local HTTP server on
 * another origin) whose pages load the SDKs' real npm builds straight from node_modules, real headless
 * Chromium, and per test a source whose Webhooks destination points at a recording receiver.
 *
 * The pages are configured only with what a customer would change: the write key and Sluice's URL,
 * both read from the page's query string.
 */
import assert from 'node:assert/strict'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { verifySignature } from '../../src/deliver/signing.ts'
import type { Source } from '../../src/domain/sources.ts'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { launchChromium, packageFile, type StaticServer, serveStatic } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'

export const SHARED_SECRET = 'browser-sdk-secret'

/** analytics.js, as a website using the npm package would set it up: `AnalyticsBrowser.load`. */
const SEGMENT_PAGE = `<!doctype html>
<title>Segment page</title>
<script src="/sdk/analytics-next.js"></script>
<script>
  const params = new URLSearchParams(location.search)
  // Opt-in delivery modes, as a site would set them in its load options.
  const segmentIo = {}
  if (params.get('batching')) {
    segmentIo.deliveryStrategy = { strategy: 'batching', config: JSON.parse(params.get('batching')) }
  }
  window.analytics = AnalyticsNext.AnalyticsBrowser.load(
    { writeKey: params.get('writeKey'), cdnURL: params.get('sluice') },
    { integrations: { 'Segment.io': segmentIo } },
  )
</script>`

/** RudderStack's SDK, as a website using the npm package would set it up. */
const RUDDER_PAGE = `<!doctype html>
<title>RudderStack page</title>
<script type="module">
  import { RudderAnalytics } from '/sdk/rudderstack.mjs'
  const params = new URLSearchParams(location.search)
  const rudderanalytics = new RudderAnalytics()
  const sluice = params.get('sluice')
  rudderanalytics.load(params.get('writeKey'), sluice, {
    configUrl: sluice,
    ...(params.get('beacon') ? { useBeacon: true, beaconQueueOptions: { flushQueueInterval: 600000 } } : {}),
  })
  window.rudderanalytics = rudderanalytics
  window.rudderReady = new Promise((resolve) => rudderanalytics.ready(resolve))
</script>`

export interface Delivery {
  body: Record<string, any>
  signed: boolean
}

export interface Site {
  source: Source
  receiver: Receiver
  /** The JSON bodies the receiver got so far, with whether each one's X-Signature verified. */
  deliveries(): Delivery[]
  /** Waits until the receiver has `count` deliveries, then a little longer to catch any extra. */
  settled(count: number): Promise<Delivery[]>
}

export interface Harness {
  sluice: TestSluice
  website: StaticServer
  browser: Browser
  /** A new source with a Webhooks destination (signed) to its own recording receiver. */
  site(name: string): Promise<Site>
  /** A fresh browser profile (no stored ids, no cache) with a page of `sdk` loaded for `source`. */
  open(sdk: 'segment' | 'rudderstack', source: Source, options?: OpenOptions): Promise<OpenPage>
  close(): Promise<void>
}

export interface OpenOptions {
  /** More query parameters for the page (its opt-in delivery modes). */
  query?: Record<string, string>
  /** Run the page's clock this far ahead of the real one, as on a visitor's machine set wrong. */
  clockOffsetMs?: number
}

export interface OpenPage {
  context: BrowserContext
  page: Page
  /** Every request the page sent to Sluice (preflights are not requests of the page). */
  sluiceRequests: Request[]
  /** Messages the page logged to its console, for failure messages. */
  console: string[]
}

export async function startHarness(): Promise<Harness> {
  const sluice = await startTestSluice()
  const website = await serveStatic({
    '/segment.html': { html: SEGMENT_PAGE },
    '/rudderstack.html': { html: RUDDER_PAGE },
    '/sdk/analytics-next.js': { file: await packageFile('@segment/analytics-next', 'dist/umd/index.js') },
    // The "bundled" build carries its plugins; the default one would fetch them from RudderStack's CDN.
    '/sdk/rudderstack.mjs': {
      file: await packageFile('@rudderstack/analytics-js', 'dist/npm/modern/bundled/esm/index.mjs'),
    },
    '/elsewhere.html': { html: '<!doctype html><title>Another page</title>' },
  })
  const browser = await launchChromium()
  const receivers: Receiver[] = []
  const contexts: BrowserContext[] = []

  return {
    sluice,
    website,
    browser,
    async site(name) {
      const source = await sluice.createSource(name)
      const receiver = await startReceiver()
      receivers.push(receiver)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `${name} hooks`,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }], sharedSecret: SHARED_SECRET },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      const deliveries = () =>
        receiver.requests.map((request) => ({
          body: JSON.parse(request.body.toString('utf8')),
          signed: verifySignature(request.body, request.headers['x-signature'], SHARED_SECRET),
        }))
      return {
        source,
        receiver,
        deliveries,
        async settled(count) {
          await until(`${count} deliveries at ${name}'s receiver`, deliveries, (seen) => seen.length >= count)
          // Anything sent twice would arrive within moments of the first copy.
          await new Promise((resolve) => setTimeout(resolve, 750))
          return deliveries()
        },
      }
    },
    async open(sdk, source, { query = {}, clockOffsetMs } = {}) {
      const context = await browser.newContext()
      contexts.push(context)
      if (clockOffsetMs !== undefined) await skewClock(context, clockOffsetMs)
      const page = await context.newPage()
      const opened: OpenPage = { context, page, sluiceRequests: [], console: [] }
      page.on('request', (request) => {
        if (request.url().startsWith(sluice.url)) opened.sluiceRequests.push(request)
      })
      page.on('console', (message) => opened.console.push(`${message.type()}: ${message.text()}`))
      page.on('pageerror', (error) => opened.console.push(`pageerror: ${error.message}`))
      const params = new URLSearchParams({ writeKey: source.writeKey, sluice: sluice.url, ...query })
      await page.goto(`${website.url}/${sdk}.html?${params}`)
      return opened
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {})
      await browser.close()
      await website.close()
      for (const receiver of receivers) await receiver.close()
      await sluice.destroy()
    },
  }
}

/** Asserts what every delivered message (but delete) carries, per docs/webhooks.md. */
export function assertCommonShape(delivery: Delivery, userAgent: string): void {
  const { body } = delivery
  assert.ok(delivery.signed, `X-Signature must verify for ${JSON.stringify(body)}`)
  assert.equal(body.version, 1)
  assert.match(body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  assert.equal(typeof body.messageId, 'string')
  assert.equal(typeof body.anonymousId, 'string', 'browser SDKs always send an anonymousId')
  assert.equal(body.context.ip, '127.0.0.1', 'context.ip is the address the call came from')
  assert.equal(body.context.userAgent, userAgent, "context.userAgent is the browser's")
  // The event happened moments ago: the corrected timestamp is on the server's clock.
  assert.ok(Math.abs(Date.parse(body.timestamp) - Date.now()) < 60_000, `timestamp ${body.timestamp} is now`)
}

/** The one delivery of `type` (and fails if there are none or several). */
export function onlyOne(deliveries: Delivery[], type: string): Delivery {
  const matching = deliveries.filter((delivery) => delivery.body.type === type)
  assert.equal(matching.length, 1, `exactly one ${type} delivery; got ${JSON.stringify(matching)}`)
  return matching[0]!
}

/** Makes the page's clock run `offsetMs` ahead of the real one, before any of its scripts run. */
async function skewClock(context: BrowserContext, offsetMs: number): Promise<void> {
  await context.addInitScript((offset: number) => {
    const RealDate = Date
    class SkewedDate extends RealDate {
      constructor(...args: unknown[]) {
        if (args.length === 0) super(RealDate.now() + offset)
        else super(...(args as [string]))
      }
      static override now(): number {
        return RealDate.now() + offset
      }
    }
    ;(globalThis as { Date: DateConstructor }).Date = SkewedDate as DateConstructor
  }, offsetMs)
}
