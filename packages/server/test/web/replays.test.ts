/**
 * Replays in the web app, in real Chromium against a real Sluice and real receivers: the setup wizard's
 * "Also send the last N days" starts a replay of the chosen sources' history; the destination page's
 * Replays section starts one over a window, shows its progress, and cancels a running one. Checked with
 * axe-core and photographed (packages/web/test-results/screenshots).
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

describe('replays in the web app', () => {
  let sluice: TestSluice
  let browser: Browser
  let page: Page
  let receiver: Receiver
  let slow: Receiver
  /**
   * Answers to replayed requests wait here until the test lets them go: the replay then cannot end
   * before its cancel lands, however slowly a loaded machine clicks.
   */
  let replayAnswers: (() => void)[] | null = null

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    receiver = await startReceiver()
    slow = await startReceiver((req, res) => {
      const answer = () => setTimeout(() => res.end('ok'), 150)
      if (replayAnswers && req.headers['x-sluice-replay']) replayAnswers.push(answer)
      else answer()
    })
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
    await receiver?.close()
    await slow?.close()
    await sluice?.destroy()
  })

  test('the setup wizard also sends the last N days of the chosen sources', async () => {
    const source = await sluice.createSource('Shop history')
    const batch = Array.from({ length: 5 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'Bought',
      messageId: `past-${i}`,
    }))
    assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
    await page.goto(`${sluice.url}/catalog/webhooks`)
    await page.getByRole('heading', { name: 'Set up Webhooks', level: 1 }).waitFor({ timeout: SLOW })
    await page.getByLabel('Destination name').fill('Backfilled hooks')
    await page.getByRole('checkbox', { name: 'Shop history' }).check()
    await page.getByLabel('URL 1').fill(`${receiver.url}/in`)
    await page.getByLabel('Also send the last N days').fill('3')
    await screenshot(page, 'replay-wizard-1280')
    await assertAccessible(page, 'the setup wizard with the backfill option')
    await page.getByRole('button', { name: 'Save destination' }).click()
    await page.getByRole('heading', { name: 'Backfilled hooks', level: 1 }).waitFor({ timeout: SLOW })
    await page.getByRole('status').filter({ hasText: 'the last 3 days' }).waitFor({ timeout: SLOW })
    await until(
      'the backfilled calls',
      () => receiver.requests.length,
      (n) => n === 5,
      20_000,
    )
    for (const request of receiver.requests) assert.match(String(request.headers['x-sluice-replay']), /^rpl_/)
    const replays = page.getByRole('region', { name: 'Replays and their progress' })
    await replays.getByRole('cell', { name: 'finished' }).waitFor({ timeout: SLOW })
    await screenshot(page, 'replay-destination-1280')
    await assertAccessible(page, 'the destination page with its replays')
  })

  test('the Replays section starts a replay over a window and cancels a running one', async () => {
    const source = await sluice.createSource('Long history')
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Slow hooks',
      type: 'webhooks',
      sourceIds: [source.id],
      enabled: true,
      settings: { webhooks: [{ url: `${slow.url}/in` }] },
    })
    assert.equal(created.status, 201)
    const batch = Array.from({ length: 60 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'Viewed',
      messageId: `long-${i}`,
    }))
    assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
    // Delivered live already: a replay without "Also send calls it already got" would skip them all.
    await until(
      'the live deliveries',
      () => slow.requests.length,
      (n) => n === 60,
      30_000,
    )
    await page.goto(`${sluice.url}/destinations/${created.body.id}`)
    const form = page.getByRole('form', { name: 'Start a replay' })
    await form.waitFor({ timeout: SLOW })
    await form.getByLabel('Also send calls it already got').check()
    replayAnswers = []
    await form.getByRole('button', { name: 'Start replay' }).click()
    const table = page.getByRole('region', { name: 'Replays and their progress' })
    await table.getByRole('cell', { name: 'running' }).waitFor({ timeout: SLOW })
    await until(
      'the replay under way',
      () => slow.requests.length,
      (n) => n > 62,
      20_000,
    )
    await table.getByRole('button', { name: /^Cancel the replay/ }).click()
    await table.getByRole('cell', { name: 'cancelled' }).waitFor({ timeout: SLOW })
    const sent = slow.requests.length
    // The held requests are answered now: a replay still running would use the freed room to send more.
    for (const answer of replayAnswers.splice(0)) answer()
    replayAnswers = null
    await new Promise((resolve) => setTimeout(resolve, 600))
    assert.equal(slow.requests.length, sent, 'nothing of the replay is sent after the cancel')
    assert.ok(sent < 120, 'the cancel came before the replay ended')
    await screenshot(page, 'replay-cancelled-1280')
    await assertAccessible(page, 'a cancelled replay')
    // On a phone: the form's fields and the progress table fit the narrow screen.
    const wide = page.viewportSize()
    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, 'replay-cancelled-390')
    await assertAccessible(page, 'a cancelled replay on a phone')
    if (wide) await page.setViewportSize(wide)
    // A viewer follows replays but starts and cancels none.
    await asViewer(browser, sluice, async (viewerPage) => {
      await viewerPage.goto(`${sluice.url}/destinations/${created.body.id}`)
      const shown = viewerPage.getByRole('region', { name: 'Replays and their progress' })
      await shown.getByRole('cell', { name: 'cancelled' }).waitFor({ timeout: SLOW })
      assert.equal(await viewerPage.getByRole('form', { name: 'Start a replay' }).count(), 0)
      assert.equal(await shown.getByRole('button').count(), 0)
    })
  })
})
