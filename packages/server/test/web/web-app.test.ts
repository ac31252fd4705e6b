/**
 * The web app end to end in real Chromium, against a real Sluice and real recording receivers: sign in,
 * create a source, watch calls arrive in the live debugger, set up Webhooks in the wizard, see a
 * failing endpoint's attempts and replay after fixing it, and what a viewer may see and do.
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
import { assertAccessible, requireBuiltApp, screenshot } from './web-harness.ts'

const SECRET = 'wizard-shared-secret'

describe('the web app in Chromium', () => {
  let sluice: TestSluice
  let browser: Browser
  let admin: BrowserContext
  let page: Page
  let first: Receiver
  let second: Receiver
  let flaky: Receiver
  /** The flaky receiver refuses with 422 until the test "fixes" it. */
  let flakyFixed = false
  let writeKey = ''
  let sourceId = ''

  const track = (body: Record<string, unknown>, path = '/v1/track') =>
    fetch(sluice.url + path, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(writeKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    first = await startReceiver()
    second = await startReceiver()
    flaky = await startReceiver((_req, res) => {
      if (flakyFixed) res.end('ok')
      else res.writeHead(422, { 'content-type': 'text/plain' }).end('order rejected: missing total')
    })
    browser = await launchChromium()
    admin = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      bypassCSP: true,
      locale: 'en-US',
    })
    page = await admin.newPage()
  })
  after(async () => {
    await browser?.close()
    for (const receiver of [first, second, flaky]) await receiver?.close()
    await sluice?.destroy()
  })

  test('sign in with the access token', async () => {
    await page.goto(sluice.url)
    await page.getByLabel('Access token').waitFor()
    await assertAccessible(page, 'the sign-in page')
    await screenshot(page, 'sign-in')
    await page.getByLabel('Access token').fill('not-a-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor()
    await page.getByLabel('Access token').fill(sluice.adminToken)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const nav = page.getByRole('navigation', { name: 'Main' })
    for (const name of ['Sources', 'Catalog', 'Destinations', 'Privacy', 'Audiences']) {
      await nav.getByRole('link', { name, exact: true }).waitFor()
    }
    const cookies = await admin.cookies()
    const session = cookies.find((cookie) => cookie.name === 'sluice_session')
    assert.ok(session, 'a session cookie is set')
    assert.equal(session.httpOnly, true)
    assert.equal(session.sameSite, 'Strict')
    assert.equal(
      await page.evaluate(() => (globalThis as any).document.cookie),
      '',
      'scripts cannot read the session cookie',
    )
  })

  test('create a source and copy its write key', async () => {
    await page.getByRole('link', { name: 'Sources', exact: true }).click()
    await page.getByLabel('Source name').fill('   ')
    await page.getByRole('button', { name: 'Create source' }).click()
    await page.getByRole('alert').filter({ hasText: /name/i }).waitFor()
    await page.getByLabel('Source name').fill('Web shop')
    await page.getByRole('button', { name: 'Create source' }).click()
    await page.getByRole('heading', { name: 'Web shop' }).waitFor()
    sourceId = page.url().split('/').pop()!
    await page.getByRole('button', { name: 'Show' }).click()
    writeKey = (await page.locator('code.write-key').textContent()) ?? ''
    const stored = await sluice.api('GET', `/api/v1/sources/${sourceId}`)
    assert.equal(writeKey, stored.body.writeKey)
  })

  test('the live debugger shows accepted and rejected calls, with pause, search and raw JSON', async () => {
    await page.getByRole('status').filter({ hasText: 'Listening' }).waitFor()
    assert.equal(
      (await track({ userId: 'user-1', event: 'Order Completed', properties: { total: 12 } })).status,
      200,
    )
    const batch = await track(
      {
        batch: [
          { type: 'track', userId: 'user-2', event: 'Cart Viewed' },
          { type: 'track', userId: 'user-3' },
        ],
      },
      '/v1/batch',
    )
    assert.equal(batch.status, 200)
    const calls = page.getByRole('list', { name: 'Calls' })
    await calls.getByText('Order Completed').waitFor()
    await calls.getByText('Cart Viewed').waitFor()
    await calls.locator('.badge-rejected').first().waitFor()
    await calls.locator('.badge-rejected').first().click()
    await page
      .getByRole('alert')
      .filter({ hasText: /Rejected: .*event/ })
      .waitFor()
    await assertAccessible(page, 'the source page with its live debugger')
    await screenshot(page, 'source-live-debugger')

    await page.getByRole('button', { name: 'Pause' }).click()
    await track({ userId: 'user-4', event: 'Sent While Paused' })
    await page.getByRole('button', { name: 'Resume' }).click()
    await track({ userId: 'user-5', event: 'Sent After Resume' })
    await calls.getByText('Sent After Resume').waitFor()
    assert.equal(await calls.getByText('Sent While Paused').count(), 0, 'a paused debugger drops calls')

    await page.getByRole('searchbox', { name: 'Search calls' }).fill('cart viewed')
    await until(
      'the search to leave one call',
      () => calls.getByRole('listitem').count(),
      (n) => n === 1,
    )
    await calls.getByText('Cart Viewed').click()
    const json = page.getByRole('region', { name: 'Call JSON' })
    assert.match((await json.textContent()) ?? '', /\n {2}"type": "track"/)
    await page.getByLabel('Raw JSON').check()
    assert.equal(
      await json.textContent(),
      JSON.stringify({ type: 'track', userId: 'user-2', event: 'Cart Viewed' }),
    )
  })

  test('set up Webhooks through the wizard: two URLs, a header and a secret; calls arrive signed', async () => {
    await page.getByRole('link', { name: 'Catalog', exact: true }).click()
    await page.getByRole('link', { name: 'Set up Webhooks' }).click()
    await page.getByLabel('Destination name').fill('Order hooks')
    await page.getByLabel('Web shop').check()
    await page.getByLabel('URL 1').fill(`${first.url}/hooks`)
    await page.getByRole('button', { name: 'Add header to URL 1' }).click()
    await page.getByLabel('Header name 1 of URL 1').fill('X-Api-Key')
    await page.getByLabel('Header value 1 of URL 1').fill('key-123')
    await page.getByRole('button', { name: 'Add URL' }).click()
    await page.getByLabel('URL 2').fill('not a url')
    await page.getByLabel('Shared secret').fill(SECRET)
    await assertAccessible(page, 'the Webhooks wizard')
    await screenshot(page, 'webhooks-wizard')
    await page.getByRole('button', { name: 'Save destination' }).click()
    // The API's refusal is shown next to the URL it concerns.
    await page.getByLabel('URL 2').and(page.locator('[aria-invalid="true"]')).waitFor()
    await page.getByRole('alert').filter({ hasText: /URL/ }).waitFor()
    await page.getByLabel('URL 2').fill(`${second.url}/hooks`)
    await page.getByRole('button', { name: 'Save destination' }).click()
    await page.getByRole('heading', { name: 'Webhooks saved' }).waitFor()

    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.getByRole('list', { name: 'Test results' }).getByText(`${second.url}/hooks`).waitFor()
    await until(
      'both receivers to get the test event',
      () => first.requests.length + second.requests.length,
      (n) => n === 2,
    )

    assert.equal((await track({ userId: 'user-9', event: 'Wizard Works' })).status, 200)
    for (const receiver of [first, second]) {
      const request = await until(
        'the call to reach the receiver',
        () => receiver.requests.find((r) => r.body.toString().includes('Wizard Works')),
        (found) => found !== undefined,
      )
      assert.ok(verifySignature(request!.body, request!.headers['x-signature'], SECRET), 'signature verifies')
    }
    const atFirst = first.requests.find((r) => r.body.toString().includes('Wizard Works'))!
    assert.equal(atFirst.headers['x-api-key'], 'key-123')
    const atSecond = second.requests.find((r) => r.body.toString().includes('Wizard Works'))!
    assert.equal(atSecond.headers['x-api-key'], undefined, 'headers belong to their URL')
  })

  test("a failing endpoint's delivery shows its attempts and response; replay after the fix", async () => {
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Flaky endpoint',
      type: 'webhooks',
      sourceIds: [sourceId],
      settings: { webhooks: [{ url: `${flaky.url}/orders` }] },
    })
    assert.equal(created.status, 201)
    assert.equal((await track({ userId: 'user-42', event: 'Order Refunded' })).status, 200)
    await until(
      'the flaky receiver to refuse',
      () => flaky.requests.length,
      (n) => n >= 1,
    )

    await page.getByRole('link', { name: 'Destinations', exact: true }).click()
    await page.getByRole('link', { name: 'Flaky endpoint' }).click()
    await page.getByLabel('Status').selectOption('failed')
    await page.getByLabel('User ID').fill('user-42')
    const row = page
      .getByRole('table', { name: 'Deliveries, newest first' })
      .getByRole('row')
      .filter({ has: page.locator('.badge-failed') })
    await row.first().waitFor({ timeout: 30_000 })
    await row.first().getByRole('button').click()
    const detail = page.locator('.delivery-detail')
    await detail.getByText('order rejected: missing total').waitFor()
    await detail.getByText(/422/).first().waitFor()
    const body = await page.getByRole('region', { name: 'Body sent' }).textContent()
    assert.match(body ?? '', /"event": "Order Refunded"/)
    await page
      .getByRole('region', { name: `Headers sent to ${flaky.url}/orders` })
      .getByText(/User-Agent/)
      .waitFor()
    // The charts come from the series endpoint; uPlot draws them on a canvas once loaded.
    await page.getByRole('img', { name: 'Attempts chart' }).locator('canvas').first().waitFor()
    await page.getByRole('img', { name: 'Latency chart' }).locator('canvas').first().waitFor()
    await page.getByLabel('Last week').check()
    await page.getByRole('img', { name: 'Attempts chart' }).locator('canvas').first().waitFor()
    await assertAccessible(page, 'the destination page with a failed delivery')
    await screenshot(page, 'destination-failed-delivery')

    flakyFixed = true
    await page.getByRole('button', { name: 'Replay this delivery' }).click()
    await until(
      'the replay to reach the fixed receiver',
      () => flaky.requests.length,
      (n) => n >= 2,
    )
    await page.getByLabel('Status').selectOption('delivered')
    await page
      .getByRole('row')
      .filter({ has: page.locator('.badge-delivered') })
      .first()
      .waitFor({ timeout: 30_000 })
  })

  test('on a phone-sized screen the navigation folds into a menu', async () => {
    const phone = await admin.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    await phone.goto(`${sluice.url}/sources`)
    await phone.getByRole('button', { name: 'Menu' }).click()
    await phone.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Destinations' }).click()
    await phone.getByRole('heading', { name: 'Destinations' }).waitFor()
    await assertAccessible(phone, 'the destinations page on a phone')
    await screenshot(phone, 'destinations-phone')
    await phone.close()
  })

  test('a viewer sees masked secrets and no way to change anything; sign out', async () => {
    const token = await sluice.api('POST', '/api/v1/tokens', { name: 'Support', role: 'viewer' })
    const viewer = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      bypassCSP: true,
      locale: 'en-US',
    })
    const viewerPage = await viewer.newPage()
    try {
      await viewerPage.goto(sluice.url)
      await viewerPage.getByLabel('Access token').fill(token.body.token)
      await viewerPage.getByRole('button', { name: 'Sign in' }).click()
      await viewerPage.getByRole('heading', { name: 'Sources' }).waitFor()
      assert.equal(await viewerPage.getByRole('button', { name: 'Create source' }).count(), 0)
      await viewerPage.getByRole('link', { name: 'Web shop' }).click()
      await viewerPage.getByRole('heading', { name: 'Web shop' }).waitFor()
      assert.equal(await viewerPage.locator('code.write-key').textContent(), '••••••••')
      assert.ok(!(await viewerPage.content()).includes(writeKey), 'the write key is nowhere on the page')
      assert.equal(await viewerPage.getByRole('button', { name: 'Rotate write key' }).count(), 0)

      await viewerPage.getByRole('link', { name: 'Destinations', exact: true }).click()
      await viewerPage.getByRole('link', { name: 'Order hooks' }).click()
      await viewerPage.getByText('X-Api-Key: ••••••••').waitFor()
      assert.ok(!(await viewerPage.content()).includes('key-123'), 'header values are masked')
      assert.equal(await viewerPage.getByRole('button', { name: 'Send test event' }).count(), 0)
      assert.equal(await viewerPage.getByRole('button', { name: 'Disable' }).count(), 0)
      await screenshot(viewerPage, 'destination-viewer')

      // Even a hand-made request from the viewer's page is refused by the API.
      const status = await viewerPage.evaluate(async () => {
        const response = await fetch('/api/v1/sources', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-sluice-csrf': '1' },
          body: JSON.stringify({ name: 'sneaky' }),
        })
        return response.status
      })
      assert.equal(status, 403)

      await viewerPage.getByRole('button', { name: 'Sign out' }).click()
      await viewerPage.getByLabel('Access token').waitFor()
      const after = await viewerPage.evaluate(async () => (await fetch('/api/v1/sources')).status)
      assert.equal(after, 401, 'signed out: the session no longer works')
    } finally {
      await viewer.close()
    }
  })
})
