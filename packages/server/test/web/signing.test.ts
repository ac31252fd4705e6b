/**
 * Signatures in the web app, in real Chromium against a real Sluice and a real receiver: the Standard
 * Webhooks switch in the edit form, the secret it makes shown once with a copy button, "Rotate secret"
 * in a dialog that shows the new secret once, and deliveries verified with the secrets the page showed
 * (the `standardwebhooks` library, as a receiver uses it). Checked with axe-core and photographed.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { type Receiver, type RecordedRequest, startReceiver } from '../deliver/receivers.ts'
import { launchChromium } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { assertAccessible, requireBuiltApp, SLOW, screenshot, signIn } from './web-harness.ts'

function verifies(request: RecordedRequest, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.body.toString('utf8'), {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    })
    return true
  } catch {
    return false
  }
}

describe('the web app: signatures and secret rotation', () => {
  let sluice: TestSluice
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let receiver: Receiver
  let writeKey = ''
  let destinationId = ''
  let firstSecret = ''

  /** Sends a call and answers the request the receiver got for it. */
  async function delivered(messageId: string): Promise<RecordedRequest> {
    const response = await send(
      sluice.url,
      '/v1/track',
      { userId: 'u1', event: 'E', messageId },
      { writeKey },
    )
    assert.equal(response.status, 200)
    const find = () => receiver.requests.find((request) => request.headers['webhook-id'] === messageId)
    await until(`the delivery of ${messageId}`, find, (found) => found !== undefined)
    return find()!
  }

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    receiver = await startReceiver()
    const source = await sluice.createSource('Shop')
    writeKey = source.writeKey
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Orders',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${receiver.url}/hooks` }], sharedSecret: 'orders-secret' },
    })
    assert.equal(created.status, 201)
    destinationId = created.body.id
    browser = await launchChromium()
    context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      locale: 'en-US',
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sluice.url })
    page = await context.newPage()
    await signIn(page, sluice.url, sluice.adminToken)
  })
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await sluice?.destroy()
  })

  test('the Standard Webhooks switch turns it on; the secret made is shown once, with a copy button', async () => {
    await page.goto(`${sluice.url}/destinations/${destinationId}/edit`)
    const toggle = page.getByRole('switch', { name: 'Standard Webhooks signature' })
    await toggle.waitFor({ timeout: SLOW })
    assert.equal(await toggle.isChecked(), false)
    await assertAccessible(page, 'the edit form')
    await toggle.check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    const shown = page.locator('.notice code.new-token')
    await shown.waitFor({ timeout: SLOW })
    firstSecret = (await shown.textContent()) ?? ''
    assert.match(firstSecret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    await page.getByRole('button', { name: 'Copy secret' }).click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), firstSecret)
    await screenshot(page, 'signing-secret-shown-1280')
    await assertAccessible(page, 'the destination page with its new secret')

    const api = await sluice.api('GET', `/api/v1/destinations/${destinationId}`)
    assert.deepEqual(api.body.settings.signing, { xSignature: true, standardWebhooks: true })
    assert.ok(verifies(await delivered('web-sig-1'), firstSecret), 'the secret shown signs deliveries')

    await page.reload()
    await page.getByRole('heading', { name: 'Signature' }).waitFor({ timeout: SLOW })
    await page.getByText('Standard Webhooks: each request carries webhook-id').waitFor()
    assert.equal(await page.getByText(firstSecret).count(), 0, 'never shown again')
    await page.goto(`${sluice.url}/destinations/${destinationId}/edit`)
    const again = page.getByRole('switch', { name: 'Standard Webhooks signature' })
    await again.waitFor({ timeout: SLOW })
    assert.equal(await again.isChecked(), true, 'the form starts from the saved signing')
  })

  test('"Rotate secret" opens a dialog that rotates with a grace and shows the new secret once', async () => {
    await page.goto(`${sluice.url}/destinations/${destinationId}`)
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rotate a signing secret' })
    await dialog.waitFor({ timeout: SLOW })
    await dialog.getByLabel('Secret').selectOption('standardWebhooks')
    await dialog.getByLabel('Grace period').selectOption({ label: '1 hour' })
    await assertAccessible(page, 'the rotation dialog')
    await dialog.getByRole('button', { name: 'Rotate', exact: true }).click()
    const shown = page.getByRole('dialog', { name: 'New secret' })
    await shown.waitFor({ timeout: SLOW })
    const secret = (await shown.locator('code.new-token').textContent()) ?? ''
    assert.match(secret, /^whsec_/)
    assert.notEqual(secret, firstSecret)
    await shown.getByRole('button', { name: 'Copy secret' }).click()
    await shown.getByRole('button', { name: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), secret)
    await screenshot(page, 'signing-rotated-1280')
    await assertAccessible(page, 'the new secret in its dialog')

    // During the grace both the new and the old secret verify.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const request = await delivered('web-sig-2')
    assert.ok(verifies(request, secret), 'the new secret verifies')
    assert.ok(verifies(request, firstSecret), 'the old secret verifies during the grace')

    await shown.getByRole('button', { name: 'Done' }).click()
    await shown.waitFor({ state: 'hidden' })
    assert.equal(await page.getByText(secret).count(), 0, 'gone once the dialog is closed')
    await page
      .getByRole('list', { name: 'Secret rotations' })
      .getByText(/Standard Webhooks secret rotated .*; the old one signs too until/)
      .waitFor({ timeout: SLOW })
    // Reopened, the dialog asks again rather than showing a secret.
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByRole('dialog', { name: 'Rotate a signing secret' }).waitFor()
    await page.getByRole('button', { name: 'Cancel' }).click()
    const listed = await sluice.api('GET', `/api/v1/destinations/${destinationId}/secrets/rotations`)
    assert.equal(listed.body.rotations.length, 1)
  })
})
