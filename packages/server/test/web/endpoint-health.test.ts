/**
 * Endpoint health in the web app, in real Chromium against a real Sluice and real receivers: each
 * URL's state on the destination page ("Healthy", "Failing", "Disabled" with why, and an Enable button
 * that sends what waited), the destinations list's summary, and the notices. Checked with axe-core and
 * photographed (packages/web/test-results/screenshots).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { launchChromium } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { assertAccessible, asViewer, requireBuiltApp, SLOW, screenshot, signIn } from './web-harness.ts'

describe('the web app shows endpoint health', () => {
  let sluice: TestSluice
  let browser: Browser
  let page: Page
  let working: Receiver
  let refusing: Receiver
  let gone: Receiver
  let goneAnswers = 410
  let mixedId = ''
  let goneId = ''
  let writeKey = ''

  const track = async (messageId: string) => {
    const batch = [{ type: 'track', userId: 'ada', event: 'Order Completed', messageId }]
    assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey })).status, 200)
  }

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice({ retry: { baseDelayMs: 50, maxDelayMs: 100, windowMs: 60_000 } })
    working = await startReceiver()
    refusing = await startReceiver((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance')
    })
    gone = await startReceiver((_req, res) => {
      res.writeHead(goneAnswers).end()
    })
    const source = await sluice.createSource('Shop')
    writeKey = source.writeKey
    const create = async (name: string, urls: string[]) => {
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: urls.map((url) => ({ url })) },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return created.body.id as string
    }
    mixedId = await create('Warehouse', [`${working.url}/in`, `${refusing.url}/in`])
    goneId = await create('Old CRM', [`${gone.url}/hooks`])
    browser = await launchChromium()
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      locale: 'en-US',
    })
    page = await context.newPage()
    await signIn(page, sluice.url, sluice.adminToken)
  })
  after(async () => {
    await browser?.close()
    for (const receiver of [working, refusing, gone]) await receiver?.close()
    await sluice?.destroy()
  })

  test('a URL failing beside a working one shows Failing with its last error; the other Healthy', async () => {
    await track('m-1')
    await until(
      'the first URL healthy and the second failing',
      async () =>
        (await sluice.api('GET', `/api/v1/destinations/${mixedId}`)).body.health
          .map((h: { state: string }) => h.state)
          .join(),
      (states) => states === 'healthy,failing',
    )
    await page.goto(`${sluice.url}/destinations/${mixedId}`)
    const rows = page.getByRole('table', { name: 'URLs and their recent attempts' }).getByRole('row')
    const first = rows.filter({ hasText: `${working.url}/in` })
    const second = rows.filter({ hasText: `${refusing.url}/in` })
    await first.getByText('Healthy', { exact: true }).waitFor({ timeout: SLOW })
    await second.getByText('Failing', { exact: true }).waitFor({ timeout: SLOW })
    await second.getByText(/503/).first().waitFor()
    // Its deliveries count as delivered all the same.
    assert.equal((await sluice.api('GET', `/api/v1/destinations/${mixedId}`)).body.stats.delivered, 1)
    await screenshot(page, 'health-failing-beside-working')
    await assertAccessible(page, 'a destination with a failing URL')
  })

  test('a URL that answered 410 shows Disabled with why; Enable sends what waited; the notice says so', async () => {
    await until(
      'the URL disabled',
      async () => (await sluice.api('GET', `/api/v1/destinations/${goneId}`)).body.health[0].state,
      (state) => state === 'disabled',
    )
    goneAnswers = 200
    await track('m-2')
    await page.goto(`${sluice.url}/destinations/${goneId}`)
    const row = page
      .getByRole('table', { name: 'URLs and their recent attempts' })
      .getByRole('row')
      .filter({ hasText: `${gone.url}/hooks` })
    await row.getByText('Disabled', { exact: true }).waitFor({ timeout: SLOW })
    await row
      .getByText(/410 Gone/)
      .first()
      .waitFor()
    const notices = page.getByRole('list', { name: 'Notices' })
    await notices.getByText(/was disabled/).waitFor({ timeout: SLOW })
    await screenshot(page, 'health-disabled')
    await assertAccessible(page, 'a destination with a disabled URL')
    // On a phone the URL reads as a block: its state, why, and the Enable button, without sideways scroll.
    const phone = await page.context().newPage()
    try {
      await phone.setViewportSize({ width: 390, height: 844 })
      await phone.goto(`${sluice.url}/destinations/${goneId}`)
      await phone.getByRole('button', { name: 'Enable URL 1' }).waitFor({ timeout: SLOW })
      await phone.getByText('Gets no requests until it is enabled.').waitFor()
      await screenshot(phone, 'health-disabled-390')
      await assertAccessible(phone, 'a destination with a disabled URL on a phone')
      const overflow = await phone.evaluate(() => {
        const root = (globalThis as any).document.scrollingElement
        return root.scrollWidth - root.clientWidth
      })
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`)
    } finally {
      await phone.close()
    }
    // What waited while the only URL was disabled goes out once it is enabled.
    assert.equal(gone.requests.length, 1)
    await row.getByRole('button', { name: 'Enable URL 1' }).click()
    await row.getByText('Disabled', { exact: true }).waitFor({ state: 'detached', timeout: SLOW })
    await until(
      'the waiting message delivered',
      () => gone.requests.length,
      (n) => n === 2,
    )
  })

  test('the destinations list says which have URLs in trouble, and lists the notices', async () => {
    await page.goto(`${sluice.url}/destinations`)
    const warehouse = page.getByRole('row').filter({ hasText: 'Warehouse' })
    await warehouse.getByText('1 URL failing').waitFor({ timeout: SLOW })
    const notices = page.getByRole('list', { name: 'Notices' })
    await notices.getByRole('link', { name: 'Old CRM' }).first().waitFor({ timeout: SLOW })
    await screenshot(page, 'health-destinations')
    await assertAccessible(page, 'the destinations list with notices')
  })

  test('a viewer sees the states and the notices, and no Enable button', async () => {
    goneAnswers = 410
    await track('m-3')
    await until(
      'the URL disabled again',
      async () => (await sluice.api('GET', `/api/v1/destinations/${goneId}`)).body.health[0].state,
      (state) => state === 'disabled',
    )
    await asViewer(browser, sluice, async (viewer) => {
      await viewer.goto(`${sluice.url}/destinations/${goneId}`)
      await viewer.getByText('Disabled', { exact: true }).first().waitFor({ timeout: SLOW })
      assert.equal(await viewer.getByRole('button', { name: /^Enable URL/ }).count(), 0)
      await viewer.getByRole('list', { name: 'Notices' }).waitFor()
    })
  })
})
