/**
 * The web app for day-to-day work, in real Chromium against a real Sluice and real receivers: change
 * and delete what was created (in dialogs), see connections both ways and a failing URL, the live
 * debugger's types, history and live counters, the deliveries list's columns, audiences edited in the
 * builder with their members, errors in the form's words, and what a viewer is told. Every page is
 * checked with axe-core and photographed at 1280 and 390 px wide (packages/web/test-results/screenshots).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { verifySignature } from '../../src/deliver/signing.ts'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { launchChromium } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { writeKeyAuth } from '../manage/helpers.ts'
import { until } from '../reliability/helpers.ts'
import { assertAccessible, asViewer, requireBuiltApp, SLOW, screenshot, signIn } from './web-harness.ts'

const SECRET = 'day-to-day-secret'

describe('the web app, day to day', () => {
  let sluice: TestSluice
  let browser: Browser
  let admin: BrowserContext
  let page: Page
  let phone: Page
  let first: Receiver
  let second: Receiver
  let refusing: Receiver
  let sourceId = ''
  let writeKey = ''
  let destinationId = ''

  const call = (path: string, body: Record<string, unknown>) =>
    fetch(sluice.url + path, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(writeKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  /** Opens `path` at 1280 and at 390 px wide: axe-core clean, no sideways scroll on a phone, both photographed. */
  async function bothWidths(name: string, path: string, ready: (p: Page) => Promise<unknown>): Promise<void> {
    for (const [shown, width] of [
      [page, 1280],
      [phone, 390],
    ] as const) {
      await shown.goto(sluice.url + path)
      await ready(shown)
      await screenshot(shown, `day-${name}-${width}`)
      await assertAccessible(shown, `${name} at ${width} px`)
      if (width === 390) {
        const { overflow, widest } = await shown.evaluate(() => {
          const { document } = globalThis as any
          const root = document.scrollingElement
          // What sticks out, to say where to look when the page does scroll sideways.
          const widest = [...document.querySelectorAll('main *')]
            .filter((element: any) => element.getBoundingClientRect().right > root.clientWidth + 1)
            .filter((element: any) => !element.parentElement.closest('.table-scroll, pre'))
            .slice(0, 5)
            .map((element: any) => `${element.tagName.toLowerCase()}.${element.className}`)
          return { overflow: root.scrollWidth - root.clientWidth, widest }
        })
        assert.ok(
          overflow <= 0,
          `${name} scrolls sideways on a phone by ${overflow} px: ${widest.join(', ')}`,
        )
      }
    }
  }

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    first = await startReceiver()
    second = await startReceiver()
    refusing = await startReceiver((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance')
    })
    browser = await launchChromium()
    admin = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      locale: 'en-US',
    })
    page = await admin.newPage()
    await signIn(page, sluice.url, sluice.adminToken)
    phone = await admin.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
  })
  after(async () => {
    await browser?.close()
    for (const receiver of [first, second, refusing]) await receiver?.close()
    await sluice?.destroy()
  })

  test('a new source says to connect a destination; Rename renames it', async () => {
    await page.getByLabel('Source name').fill('Shop')
    await page.getByRole('button', { name: 'Create source' }).click()
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor({ timeout: SLOW })
    sourceId = page.url().split('/').pop()!
    writeKey = (await sluice.api('GET', `/api/v1/sources/${sourceId}`)).body.writeKey
    const connect = page.getByRole('link', { name: 'Connect a destination' })
    await connect.waitFor()
    assert.equal(await connect.getAttribute('href'), '/catalog')

    await page.getByRole('button', { name: 'Rename' }).click()
    await page.getByLabel('Source name').fill('Web shop')
    await page.getByRole('button', { name: 'Save name' }).click()
    await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor()
    assert.equal((await sluice.api('GET', `/api/v1/sources/${sourceId}`)).body.name, 'Web shop')
  })

  test('the live debugger shows every call type, keeps them across a reload, and the counters follow', async () => {
    await page.getByRole('status').filter({ hasText: 'Listening' }).waitFor({ timeout: SLOW })
    assert.equal((await call('/v1/track', { userId: 'ada', event: 'Order Completed' })).status, 200)
    assert.equal(
      (await call('/v1/identify', { userId: 'ada', traits: { plan: 'pro', email: 'ada@example.com' } }))
        .status,
      200,
    )
    assert.equal((await call('/v1/page', { userId: 'bob', name: 'Pricing' })).status, 200)
    const calls = page.getByRole('list', { name: 'Calls' })
    await calls.getByRole('listitem').nth(2).waitFor({ timeout: SLOW })
    const types = await calls.locator('.call-type').allTextContents()
    assert.deepEqual(types, ['page', 'identify', 'track'])
    // The counter above follows the calls that arrive, without a reload.
    await page.locator('.stats div').filter({ hasText: 'Accepted' }).getByText('3', { exact: true }).waitFor()
    await page.getByText('3 calls stored in the last hour.').waitFor({ timeout: SLOW })

    await page.reload()
    await calls.getByRole('listitem').nth(2).waitFor({ timeout: SLOW })
    assert.deepEqual(await calls.locator('.call-type').allTextContents(), ['page', 'identify', 'track'])
    await bothWidths('source', `/sources/${sourceId}`, (p) =>
      p.getByRole('list', { name: 'Calls' }).getByRole('listitem').nth(2).waitFor({ timeout: SLOW }),
    )
  })

  test('errors use the form labels and clear when the field is fixed; the saved destination has its own URL', async () => {
    await page.goto(`${sluice.url}/catalog/webhooks`)
    await page.getByLabel('Destination name').fill('Orders')
    await page.getByLabel('Web shop').check()
    await page.getByLabel('URL 1').fill(`${first.url}/hooks`)
    await page.getByRole('button', { name: 'Add URL' }).click()
    await page.getByLabel('URL 2').fill('not a url')
    await page.getByLabel('Shared secret').fill(SECRET)
    await page.getByRole('button', { name: 'Save destination' }).click()
    const error = page.getByRole('alert').filter({ hasText: 'URL 2 is not an absolute URL' })
    await error.waitFor()
    assert.equal(await page.getByText('settings.webhooks').count(), 0, 'no API paths in the page')
    await bothWidths('destination-form-error', '/catalog/webhooks', async (p) => {
      await p.getByLabel('URL 1').fill('nope')
      await p.getByRole('button', { name: 'Save destination' }).click()
      await p.getByRole('alert').filter({ hasText: 'URL 1 is not' }).waitFor()
    })
    await page.goBack()
    await page.goto(`${sluice.url}/catalog/webhooks`)
    await page.getByLabel('Destination name').fill('Orders')
    await page.getByLabel('Web shop').check()
    await page.getByLabel('URL 1').fill(`${first.url}/hooks`)
    await page.getByRole('button', { name: 'Add URL' }).click()
    await page.getByLabel('URL 2').fill('not a url')
    await page.getByRole('button', { name: 'Save destination' }).click()
    await error.waitFor()
    await page.getByLabel('URL 2').fill(`${refusing.url}/hooks`)
    assert.equal(await error.count(), 0, 'the error goes once the field is edited')
    assert.equal(await page.getByLabel('URL 2').getAttribute('aria-invalid'), null)
    await page.getByLabel('Shared secret').fill(SECRET)
    await page.getByRole('button', { name: 'Save destination' }).click()
    await page.getByRole('heading', { name: 'Webhooks saved' }).waitFor({ timeout: SLOW })
    destinationId = new URL(page.url()).pathname.split('/')[2]!
    assert.match(destinationId, /^dst_/)
    await page.reload()
    await page.getByRole('heading', { name: /^Orders/, level: 1 }).waitFor({ timeout: SLOW })
  })

  test('connections both ways: the destination lists its sources, the source its destinations', async () => {
    const sources = page.getByRole('list', { name: 'Connected sources' })
    await sources.getByRole('link', { name: 'Web shop' }).click()
    await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor({ timeout: SLOW })
    const destinations = page.getByRole('list', { name: 'Connected destinations' })
    await destinations.getByRole('link', { name: 'Orders' }).click()
    await page.getByRole('heading', { name: /^Orders/, level: 1 }).waitFor({ timeout: SLOW })
  })

  test('a URL that refuses every call shows its failures though the deliveries count as delivered', async () => {
    assert.equal((await call('/v1/track', { userId: 'cyd', event: 'Cart Viewed' })).status, 200)
    await until(
      'the first URL to get it',
      () => first.requests.length,
      (n) => n >= 1,
      30_000,
    )
    await until(
      'the refusing URL to be tried',
      () => refusing.requests.length,
      (n) => n >= 1,
      30_000,
    )
    const urls = page.getByRole('table', { name: 'URLs and their recent attempts' })
    const failing = urls.getByRole('row').filter({ hasText: `${refusing.url}/hooks` })
    // The API reports each URL's health: the refusing one is Failing, the other Healthy.
    await failing.getByText('Failing', { exact: true }).waitFor({ timeout: SLOW })
    await failing.getByText(/503/).first().waitFor()
    await urls
      .getByRole('row')
      .filter({ hasText: `${first.url}/hooks` })
      .getByText('Healthy', { exact: true })
      .waitFor()
    assert.equal((await sluice.api('GET', `/api/v1/destinations/${destinationId}`)).body.stats.failed, 0)
  })

  test('deliveries list User ID and Event; the detail opens below the list, not over it', async () => {
    const table = page.getByRole('table', { name: 'Deliveries, newest first' })
    // An anonymous visitor's call is named by its anonymousId, marked as such.
    assert.equal((await call('/v1/track', { anonymousId: 'visitor-42', event: 'Page Scrolled' })).status, 200)
    await table
      .getByRole('row')
      .filter({ hasText: 'Page Scrolled' })
      .getByRole('cell', { name: 'anonymous visitor-42', exact: true })
      .waitFor({ timeout: SLOW })
    const row = table.getByRole('row').filter({ hasText: 'Cart Viewed' })
    await row.waitFor({ timeout: SLOW })
    await row.getByRole('cell', { name: 'cyd', exact: true }).waitFor()
    const headers = await table.getByRole('columnheader').allTextContents()
    for (const name of ['User ID', 'Event', 'Created']) assert.ok(headers.includes(name), `a ${name} column`)
    await row.getByRole('button').click()
    const detail = page.locator('.delivery-detail')
    await detail.getByText('maintenance').first().waitFor({ timeout: SLOW })
    const tableBox = (await table.boundingBox())!
    const detailBox = (await detail.boundingBox())!
    assert.ok(detailBox.y >= tableBox.y + tableBox.height, 'the detail starts below the list')
    await assertAccessible(page, 'the destination page with a delivery open')
    // The charts' legend: no "Time: --" row; each line's total, and a hovered minute's time and values.
    // Charts refresh every 30 s: a reload draws the attempts made since the page opened.
    await page.reload()
    const attempts = page.locator('figure.chart').filter({ hasText: 'Attempts' })
    const legend = attempts.locator('.chart-legend')
    await attempts.locator('canvas').first().waitFor({ timeout: SLOW })
    await legend.getByText('Total').waitFor({ timeout: SLOW })
    assert.equal(await page.locator('.u-legend').count(), 0, "uPlot's own legend is off")
    assert.match((await legend.textContent()) ?? '', /^TotalSucceeded \d+Failed \d+$/)
    await attempts.scrollIntoViewIfNeeded()
    const plot = (await attempts.locator('.u-over').boundingBox())!
    await page.mouse.move(plot.x + plot.width - 1, plot.y + plot.height / 2)
    await until(
      'the hovered minute in the legend',
      async () => (await legend.textContent()) ?? '',
      (text) => /^\d{1,2}:\d{2}\s?[AP]MSucceeded \d+Failed \d+$/.test(text),
    )
    await page.mouse.move(0, 0)
    await bothWidths('destination', `/destinations/${destinationId}`, async (p) => {
      await p.getByRole('table', { name: 'URLs and their recent attempts' }).waitFor({ timeout: SLOW })
      const deliveries = p.getByRole('button', { name: 'Deliveries', exact: true })
      // A phone gets the sections folded, each a button with its summary; a wide screen opens them.
      const phoneWide = p === phone
      for (const name of [
        'Connected sources',
        'Signature',
        'What it gets',
        'Over time',
        'Replays',
        'Deliveries',
      ]) {
        assert.equal(
          await p.getByRole('button', { name, exact: true }).getAttribute('aria-expanded'),
          String(!phoneWide),
          `${name} ${phoneWide ? 'folded on a phone' : 'open on a wide screen'}`,
        )
      }
      if (phoneWide) {
        assert.equal(await p.getByRole('table', { name: 'Deliveries, newest first' }).isVisible(), false)
        await deliveries.click()
        assert.equal(await deliveries.getAttribute('aria-expanded'), 'true')
      }
      await p
        .getByRole('table', { name: 'Deliveries, newest first' })
        .getByText('Cart Viewed')
        .waitFor({ timeout: SLOW })
    })
  })

  test('Edit: the form is filled in, the secret left empty stays; a call then reaches the new URL signed', async () => {
    await page.goto(`${sluice.url}/destinations/${destinationId}`)
    await page.getByRole('link', { name: 'Edit' }).click()
    await page.getByRole('heading', { name: 'Edit Orders' }).waitFor({ timeout: SLOW })
    assert.equal(await page.getByLabel('Destination name').inputValue(), 'Orders')
    assert.equal(await page.getByLabel('URL 1').inputValue(), `${first.url}/hooks`)
    assert.equal(await page.getByLabel('URL 2').inputValue(), `${refusing.url}/hooks`)
    assert.equal(await page.getByLabel('Shared secret').inputValue(), '', 'the secret is not shown')
    assert.ok(await page.getByLabel('Web shop').isChecked())
    await bothWidths('destination-edit', `/destinations/${destinationId}/edit`, async (p) => {
      await p.getByLabel('URL 2').waitFor({ timeout: SLOW })
      if (p !== phone) return
      // On a phone the form's parts are buttons that scroll to each.
      const parts = p.getByRole('navigation', { name: 'Parts of the form' })
      await parts.getByRole('button', { name: 'What it gets' }).click()
      const top = await p
        .getByLabel('Subscription')
        .evaluate((element: any) => element.getBoundingClientRect().top)
      assert.ok(top >= 0 && top < 844, `the Subscription field is on the screen (top ${top})`)
      await p.evaluate(() => {
        ;(globalThis as any).document.activeElement?.blur()
        ;(globalThis as any).scrollTo(0, 0)
      })
    })
    await page.getByLabel('URL 1').fill(`${second.url}/new`)
    await page.getByRole('button', { name: 'Remove URL 2' }).click()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'Changes saved' }).waitFor({ timeout: SLOW })
    await page.getByRole('heading', { name: /^Orders/, level: 1 }).waitFor({ timeout: SLOW })
    assert.equal(new URL(page.url()).pathname, `/destinations/${destinationId}`)

    assert.equal((await call('/v1/track', { userId: 'dee', event: 'After Edit' })).status, 200)
    const request = await until(
      'the call to reach the new URL',
      () => second.requests.find((r) => r.body.toString().includes('After Edit')),
      (found) => found !== undefined,
      30_000,
    )
    assert.equal(request!.url, '/new')
    assert.ok(
      verifySignature(request!.body, request!.headers['x-signature'], SECRET),
      'signed with the kept secret',
    )
  })

  test('what the destination gets: a subscription tried on recent calls, errors at the field, then saved', async () => {
    await page.goto(`${sluice.url}/destinations/${destinationId}/edit`)
    const subscription = page.getByLabel('Subscription')
    await subscription.fill('type = ')
    await page.getByRole('button', { name: 'Try on recent calls' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: /^Subscription/ })
      .waitFor({ timeout: SLOW })
    assert.equal(await subscription.getAttribute('aria-invalid'), 'true')
    await subscription.fill('type = "track" and event = "Keep Me"')
    await page.getByRole('button', { name: 'Try on recent calls' }).click()
    const dryRun = page.getByRole('status', { name: 'Dry run' })
    await dryRun.getByText(/would be sent/).waitFor({ timeout: SLOW })
    assert.match(
      (await dryRun.textContent()) ?? '',
      /Of the last \d+ calls, 0 would be sent, \d+ filtered out/,
    )

    const mapping = page.getByLabel('Mapping (JSON)')
    await mapping.fill('{"name": ')
    await page.getByRole('alert').filter({ hasText: 'Mapping is not valid JSON' }).waitFor()
    await mapping.fill('{"name": {"@path": "$.event"}}')
    await page.getByLabel('Method').selectOption('PUT')
    await assertAccessible(page, 'the destination form with what it gets')
    await screenshot(page, 'day-destination-policy-1280')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'Changes saved' }).waitFor({ timeout: SLOW })
    await page.getByText('type = "track" and event = "Keep Me"').waitFor()

    const before = second.requests.length
    assert.equal((await call('/v1/track', { userId: 'eve', event: 'Drop Me' })).status, 200)
    assert.equal((await call('/v1/track', { userId: 'eve', event: 'Keep Me' })).status, 200)
    const kept = await until(
      'the matching call',
      () => second.requests.slice(before).find((r) => r.body.toString().includes('Keep Me')),
      (found) => found !== undefined,
      30_000,
    )
    assert.equal(kept!.method, 'PUT')
    assert.deepEqual(JSON.parse(kept!.body.toString()), { name: 'Keep Me' })
    await page
      .locator('.stats div')
      .filter({ hasText: 'Filtered out' })
      .getByText('1', { exact: true })
      .waitFor({ timeout: SLOW })
    assert.ok(!second.requests.slice(before).some((r) => r.body.toString().includes('Drop Me')))
  })

  test('batching is turned on in the form: a limit out of range is refused at its field, then calls arrive as one array', async () => {
    await page.goto(`${sluice.url}/destinations/${destinationId}/edit`)
    await page.getByLabel('Send several calls per request, as a JSON array').check()
    const maxEvents = page.getByLabel('Most calls per request (1 to 1,000)')
    await maxEvents.fill('0')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: /whole number from 1 to 1000/ })
      .first()
      .waitFor({ timeout: SLOW })
    assert.equal(await maxEvents.getAttribute('aria-invalid'), 'true')
    await maxEvents.fill('2')
    await page.getByLabel('Longest wait for a batch to fill, in ms (0 to 60,000)').fill('5000')
    await assertAccessible(page, 'the destination form with batching')
    await screenshot(page, 'day-destination-batching-1280')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'Changes saved' }).waitFor({ timeout: SLOW })
    const saved = await sluice.api('GET', `/api/v1/destinations/${destinationId}`)
    assert.deepEqual(saved.body.settings.batching, { maxEvents: 2, maxBytes: 512_000, maxWaitMs: 5_000 })

    const before = second.requests.length
    assert.equal((await call('/v1/track', { userId: 'fay', event: 'Keep Me' })).status, 200)
    assert.equal((await call('/v1/track', { userId: 'gus', event: 'Keep Me' })).status, 200)
    const batch = await until(
      'the batch of two',
      () => second.requests.slice(before).find((r) => r.body.toString().startsWith('[')),
      (found) => found !== undefined,
      30_000,
    )
    assert.deepEqual(JSON.parse(batch!.body.toString()), [{ name: 'Keep Me' }, { name: 'Keep Me' }])
  })

  test('Delete destination asks in a dialog; Delete confirms', async () => {
    await page.getByRole('button', { name: 'Delete destination' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete the destination Orders?' })
    await dialog.waitFor()
    await assertAccessible(page, 'the delete dialog')
    await screenshot(page, 'day-delete-dialog-1280')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    assert.equal(
      await page.evaluate(() => (globalThis as any).document.activeElement?.textContent),
      'Delete destination',
      'the focus is back on the button that opened the dialog',
    )
    assert.equal((await sluice.api('GET', `/api/v1/destinations/${destinationId}`)).status, 200)
    await page.getByRole('button', { name: 'Delete destination' }).click()
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('heading', { name: 'Destinations', level: 1 }).waitFor({ timeout: SLOW })
    assert.equal((await sluice.api('GET', `/api/v1/destinations/${destinationId}`)).status, 404)
    await page.goto(`${sluice.url}/destinations/${destinationId}`)
    await page.getByRole('heading', { name: 'Destination not found' }).waitFor({ timeout: SLOW })
    await page.getByRole('link', { name: 'Back to Destinations' }).waitFor()
    await bothWidths('not-found', '/no/such/page', (p) =>
      p.getByRole('heading', { name: 'Page not found' }).waitFor(),
    )
    await bothWidths('destinations', '/destinations', (p) =>
      p.getByRole('heading', { name: 'Destinations', level: 1 }).waitFor(),
    )
  })

  test('an audience opens in the builder, is changed with Save changes, and lists its members', async () => {
    await until(
      'the calls in profiles',
      async () => (await sluice.api('GET', '/api/v1/profiles?userId=bob')).status,
      (status) => status === 200,
    )
    const created = await sluice.api('POST', '/api/v1/audiences', {
      name: 'Buyers',
      definition: { event: 'Order Completed' },
    })
    assert.equal(created.status, 201)
    await page.goto(`${sluice.url}/audiences`)
    await page.getByRole('link', { name: 'Buyers' }).click()
    await page.getByRole('heading', { name: 'Buyers', level: 1 }).waitFor({ timeout: SLOW })
    const form = page.getByRole('form', { name: 'Settings' })
    assert.equal(await form.getByLabel('Event (condition 1)').inputValue(), 'Order Completed')
    const members = page.getByRole('list', { name: 'Members' })
    await members.getByRole('link', { name: 'ada' }).waitFor({ timeout: SLOW })

    await form.getByLabel('Event (condition 1)').fill('Pricing')
    await form.getByLabel('Type of condition 1').selectOption('event')
    await form.getByLabel('Event (condition 1)').fill('Cart Viewed')
    await form.getByRole('button', { name: 'Preview' }).click()
    await form
      .getByRole('list', { name: 'Sample profiles' })
      .getByRole('link', { name: 'cyd' })
      .waitFor({ timeout: SLOW })
    await form.getByRole('button', { name: 'Save changes' }).click()
    await until(
      'the new definition saved',
      async () => (await sluice.api('GET', `/api/v1/audiences/${created.body.id}`)).body.definition,
      (definition) => definition.event === 'Cart Viewed',
    )
    await members.getByRole('link', { name: 'cyd' }).waitFor({ timeout: SLOW })
    await bothWidths('audience', `/audiences/${created.body.id}`, (p) =>
      p.getByRole('list', { name: 'Members' }).getByRole('link', { name: 'cyd' }).waitFor({ timeout: SLOW }),
    )
    await bothWidths('audiences', '/audiences', (p) =>
      p.getByRole('link', { name: 'Buyers' }).waitFor({ timeout: SLOW }),
    )
  })

  test('profiles are found by part of an id; traits read as a table', async () => {
    await page.goto(`${sluice.url}/profiles`)
    await page.getByLabel('Search profiles').fill('ad')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('list', { name: 'Profiles found' }).getByRole('link', { name: 'ada' }).click()
    const traits = page.getByRole('table', { name: 'Traits' })
    await traits
      .getByRole('row')
      .filter({ hasText: 'email' })
      .getByText('ada@example.com')
      .waitFor({ timeout: SLOW })
    await bothWidths('profiles', '/profiles?userId=ada', (p) =>
      p.getByRole('table', { name: 'Traits' }).waitFor({ timeout: SLOW }),
    )
  })

  test('destructive actions ask first: delete a user, revoke a token, rotate a key, delete a source', async () => {
    await page.goto(`${sluice.url}/privacy`)
    await page.getByLabel('User IDs').fill('bob')
    await page.getByRole('button', { name: 'Create request' }).click()
    const erase = page.getByRole('dialog', { name: 'Erase the data of bob?' })
    await erase.getByRole('button', { name: 'Erase data' }).click()
    await page
      .getByRole('table', { name: 'Requests, newest first' })
      .getByRole('cell', { name: 'Delete', exact: true })
      .waitFor({ timeout: SLOW })
    assert.equal(await page.getByText('DELETE_ONLY').count(), 0, 'request types read as words')
    await bothWidths('privacy', '/privacy', (p) =>
      p.getByRole('table', { name: 'Requests, newest first' }).waitFor({ timeout: SLOW }),
    )

    await bothWidths('access-empty', '/access', (p) =>
      p.getByText('No access tokens yet.').waitFor({ timeout: SLOW }),
    )
    await page.getByLabel('Token name').fill('Deploy bot')
    await page.getByRole('button', { name: 'Create token' }).click()
    await page.getByRole('button', { name: 'Revoke Deploy bot' }).click()
    await page
      .getByRole('dialog', { name: 'Revoke the token Deploy bot?' })
      .getByRole('button', { name: 'Revoke' })
      .click()
    await page.getByText('No access tokens yet.').waitFor({ timeout: SLOW })

    await page.goto(`${sluice.url}/sources/${sourceId}`)
    await page.getByRole('button', { name: 'Rotate write key' }).click()
    await page
      .getByRole('dialog', { name: 'Rotate the write key?' })
      .getByRole('button', { name: 'Rotate' })
      .click()
    await until(
      'the key to change',
      async () => (await sluice.api('GET', `/api/v1/sources/${sourceId}`)).body.writeKey,
      (key) => key !== writeKey,
    )
    await page.getByRole('button', { name: 'Delete source' }).click()
    await page
      .getByRole('dialog', { name: 'Delete the source Web shop?' })
      .getByRole('button', { name: 'Delete' })
      .click()
    await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor({ timeout: SLOW })
    assert.equal((await sluice.api('GET', `/api/v1/sources/${sourceId}`)).status, 404)
    await bothWidths('sources-empty', '/sources', (p) =>
      p.getByText('No sources yet.').waitFor({ timeout: SLOW }),
    )
  })

  test('a viewer opening Access is told it is for admins, with no form', async () => {
    await asViewer(browser, sluice, async (viewer) => {
      await viewer.goto(`${sluice.url}/access`)
      await viewer.getByText('Managing access tokens is for admins only.').waitFor({ timeout: SLOW })
      assert.equal(await viewer.getByLabel('Token name').count(), 0)
      assert.equal(await viewer.getByRole('alert').count(), 0, 'no error either')
      await assertAccessible(viewer, 'Access for a viewer')
      await screenshot(viewer, 'day-access-viewer-1280')
    })
  })

  test('the catalog and the sign-in page, at both widths', async () => {
    await bothWidths('catalog', '/catalog', (p) =>
      p.getByRole('link', { name: 'Set up Webhooks' }).waitFor({ timeout: SLOW }),
    )
    const outside = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
    try {
      const signInPage = await outside.newPage()
      for (const width of [1280, 390]) {
        await signInPage.setViewportSize({ width, height: 844 })
        await signInPage.goto(sluice.url)
        await signInPage.getByLabel('Access token').waitFor({ timeout: SLOW })
        await assertAccessible(signInPage, `the sign-in page at ${width} px`)
        await screenshot(signInPage, `day-sign-in-${width}`)
      }
    } finally {
      await outside.close()
    }
  })

  test('the app has a favicon', async () => {
    const href = await page.locator('link[rel="icon"]').getAttribute('href')
    const icon = await fetch(new URL(href!, sluice.url))
    assert.equal(icon.status, 200)
    assert.match(icon.headers.get('content-type') ?? '', /svg/)
  })
})
