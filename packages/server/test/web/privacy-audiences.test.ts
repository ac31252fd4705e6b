/**
 * The Privacy and Audiences pages end to end in real Chromium, against a real Sluice and a real recording
 * receiver: a suppression made in the page drops a user's calls until it is lifted there, a deletion
 * reaches FINISHED with one `delete` at the receiver, an audience built with the tree builder is previewed,
 * saved and synced, and a viewer sees the lists but no forms.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { launchChromium } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { writeKeyAuth } from '../manage/helpers.ts'
import { until } from '../reliability/helpers.ts'
import {
  assertAccessible,
  asViewer,
  openPage,
  requireBuiltApp,
  SLOW,
  screenshot,
  signIn as signInAt,
} from './web-harness.ts'

/** Generous: the machine running the tests may be loaded. */

describe('the Privacy and Audiences pages in Chromium', () => {
  let sluice: TestSluice
  let receiver: Receiver
  let browser: Browser
  let admin: BrowserContext
  let page: Page
  let writeKey = ''

  const track = async (userId: string, event: string) => {
    const response = await fetch(`${sluice.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(writeKey), 'content-type': 'application/json' },
      body: JSON.stringify({ userId, event }),
    })
    assert.equal(response.status, 200, `the call of ${userId} is acknowledged`)
  }
  const bodies = () => receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')))
  const received = (userId: string, event: string) =>
    until(
      `${event} of ${userId} at the receiver`,
      () => bodies().some((body) => body.userId === userId && body.event === event),
      (found) => found,
      SLOW,
    )

  const signIn = (target: Page, token: string) => signInAt(target, sluice.url, token)
  const open = (target: Page, name: 'Privacy' | 'Audiences') => openPage(target, name)

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    receiver = await startReceiver()
    const source = await sluice.createSource('Web shop')
    writeKey = source.writeKey
    const destination = await sluice.api('POST', '/api/v1/destinations', {
      name: 'Recorder',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${receiver.url}/hooks` }] },
    })
    assert.equal(destination.status, 201)
    browser = await launchChromium()
    admin = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      locale: 'en-US',
    })
    page = await admin.newPage()
    await signIn(page, sluice.adminToken)
  })
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await sluice?.destroy()
  })

  test('suppress a user in the page: their calls are acknowledged, never delivered; lift it: delivery resumes', async () => {
    await open(page, 'Privacy')
    await page.getByText('No user is suppressed.').waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the empty Privacy page')

    // Nothing to act on: the API's refusal is shown next to the user ids (once the dialog that asks
    // before erasing anything is confirmed).
    await page.getByRole('button', { name: 'Create request' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Erase data' }).click()
    await page.getByLabel('User IDs').and(page.locator('[aria-invalid="true"]')).waitFor({ timeout: SLOW })
    await page.getByRole('alert').first().waitFor()

    await page.getByLabel('Request type').selectOption('SUPPRESS_ONLY')
    await page.getByLabel('User IDs').fill('quiet-user\n')
    await page.getByRole('button', { name: 'Create request' }).click()
    const suppressed = page.getByRole('table', { name: 'Suppressed users' })
    await suppressed.getByRole('cell', { name: 'quiet-user', exact: true }).waitFor({ timeout: SLOW })
    assert.equal(await page.getByLabel('User IDs').and(page.locator('[aria-invalid="true"]')).count(), 0)

    await track('quiet-user', 'While Suppressed')
    await track('loud-user', 'Control Call')
    // The control call was sent after the suppressed one, so once it arrives the other would have too.
    await received('loud-user', 'Control Call')
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.ok(
      !bodies().some((body) => body.userId === 'quiet-user'),
      'a suppressed user’s call is never delivered',
    )
    await assertAccessible(page, 'the Privacy page with a suppression')
    await screenshot(page, 'privacy-suppressed')

    await suppressed.getByRole('button', { name: 'Lift suppression of quiet-user' }).click()
    await page.getByText('No user is suppressed.').waitFor({ timeout: SLOW })
    await page
      .getByRole('table', { name: 'Requests, newest first' })
      .getByRole('row')
      .filter({ hasText: 'Unsuppress' })
      .first()
      .waitFor({ timeout: SLOW })
    await track('quiet-user', 'After Lift')
    await received('quiet-user', 'After Lift')
    assert.ok(!bodies().some((body) => body.event === 'While Suppressed'))
  })

  test('delete a user with stored calls in the page: FINISHED, and one delete at the receiver', async () => {
    await track('leaving-user', 'First Call')
    await track('leaving-user', 'Second Call')
    await received('leaving-user', 'Second Call')

    await page.getByLabel('Request type').selectOption('DELETE_ONLY')
    await page.getByLabel('User IDs').fill('leaving-user')
    await page.getByRole('button', { name: 'Create request' }).click()
    await page
      .getByRole('dialog', { name: 'Erase the data of leaving-user?' })
      .getByRole('button', { name: 'Erase data' })
      .click()
    const row = page
      .getByRole('table', { name: 'Requests, newest first' })
      .getByRole('row')
      .filter({ hasText: 'leaving-user' })
    // The page follows the request by itself until it is final.
    await row.locator('.badge-FINISHED').waitFor({ timeout: SLOW })
    await row.getByText('Recorder: 1 / 0').waitFor({ timeout: SLOW })
    assert.equal(await row.locator('td.num').textContent(), '2', 'both stored calls erased')
    const deletes = bodies().filter((body) => body.type === 'delete')
    assert.equal(deletes.length, 1)
    assert.equal(deletes[0].userId, 'leaving-user')
    await assertAccessible(page, 'the Privacy page with a finished deletion')
    await screenshot(page, 'privacy-deletion-finished')
  })

  test('a suppression in one source is lifted in that source', async () => {
    await page.getByLabel('Request type').selectOption('SUPPRESS_ONLY')
    await page.getByLabel('User IDs').fill('scoped-user')
    await page.getByRole('form', { name: 'New request' }).getByLabel('Web shop').check()
    await page.getByRole('button', { name: 'Create request' }).click()
    const suppressed = page.getByRole('table', { name: 'Suppressed users' })
    const row = suppressed.getByRole('row').filter({ hasText: 'scoped-user' })
    await row.getByRole('cell', { name: 'Web shop', exact: true }).waitFor({ timeout: SLOW })
    await row.getByRole('button', { name: 'Lift suppression of scoped-user' }).click()
    await page.getByText('No user is suppressed.').waitFor({ timeout: SLOW })
    const lifted = await until(
      'the unsuppress request',
      async () =>
        (await sluice.api('GET', '/api/v1/regulations')).body.regulations.find(
          (regulation: { regulationType: string; subjectIds: string[] }) =>
            regulation.regulationType === 'UNSUPPRESS' && regulation.subjectIds.includes('scoped-user'),
        ),
      (found) => found !== undefined,
      SLOW,
    )
    const sources = (await sluice.api('GET', '/api/v1/sources')).body.sources
    assert.deepEqual(lifted.sourceIds, [sources[0].id], 'lifted in the source it was suppressed in')
  })

  test('build an audience in the page (one performed-event leaf), preview, save: the receiver gets true for a member', async () => {
    await track('buyer', 'Order Completed')
    await track('window-shopper', 'Product Viewed')
    const profileOf = (userId: string) =>
      until(
        `the profile of ${userId}`,
        () => sluice.api('GET', `/api/v1/profiles?userId=${userId}`),
        (response) => response.status === 200,
        SLOW,
      )
    await profileOf('buyer')
    await profileOf('window-shopper')

    await open(page, 'Audiences')
    await page.getByText('No audiences yet.').waitFor({ timeout: SLOW })
    await page.getByLabel('Audience name').fill('Buyers')
    await page.getByLabel('Event (condition 1.1)').fill('Order Completed')

    // A second condition naming a computed trait that does not exist: the error is shown at that node.
    await page.getByRole('button', { name: 'Add condition to condition 1' }).click()
    await page.getByLabel('Type of condition 1.2').selectOption('computedTrait')
    await page.getByLabel('Computed trait key (condition 1.2)').fill('no_such_trait')
    await page.getByLabel('Operator (condition 1.2)').selectOption('>=')
    await page.getByLabel('Value (condition 1.2)').fill('3')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page
      .getByLabel('Computed trait key (condition 1.2)')
      .and(page.locator('[aria-invalid="true"]'))
      .waitFor({ timeout: SLOW })
    await page.getByRole('alert').filter({ hasText: 'no_such_trait' }).waitFor()
    assert.equal(await page.getByLabel('Event (condition 1.1)').getAttribute('aria-invalid'), null)
    await assertAccessible(page, 'the audience builder with an error at a node')
    await screenshot(page, 'audience-builder-error')
    await page.getByRole('button', { name: 'Remove condition 1.2' }).click()

    await page.getByRole('button', { name: 'Preview' }).click()
    const preview = page.locator('.preview')
    await preview.getByText(/1\s+profile now/).waitFor({ timeout: SLOW })
    await preview
      .getByRole('list', { name: 'Sample profiles' })
      .getByRole('link', { name: 'buyer', exact: true })
      .waitFor()

    await page.getByRole('form', { name: 'New audience' }).getByLabel('Recorder').check()
    await page.getByRole('button', { name: 'Save audience' }).click()
    const row = page.getByRole('table', { name: 'Audiences' }).getByRole('row').filter({ hasText: 'buyers' })
    await row.waitFor({ timeout: SLOW })
    const identify = await until(
      'a true identify for the member',
      () => bodies().find((body) => body.type === 'identify' && body.userId === 'buyer'),
      (found) => found !== undefined,
      SLOW,
    )
    assert.deepEqual(identify.traits, { buyers: true })
    assert.ok(!bodies().some((body) => body.type === 'identify' && body.userId === 'window-shopper'))
    await row.locator('.badge-live').waitFor({ timeout: SLOW })
    await row.getByRole('cell', { name: '1', exact: true }).waitFor({ timeout: SLOW })

    await page.getByLabel('User ID').fill('buyer')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page
      .getByRole('list', { name: 'Audiences of the profile' })
      .getByText('buyers')
      .waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the Audiences page with an audience and a profile')
    await screenshot(page, 'audiences')
  })

  test('create a computed trait in the page; the profile lookup shows its value', async () => {
    const form = page.getByRole('form', { name: 'New computed trait' })
    await form.getByLabel('Computed trait name').fill('Orders')
    await form.getByRole('button', { name: 'Save computed trait' }).click()
    // No event: the API's refusal is shown at that field.
    await form.getByLabel('Track event').and(page.locator('[aria-invalid="true"]')).waitFor({ timeout: SLOW })
    await form.getByLabel('Kind').selectOption('count')
    await form.getByLabel('Track event').fill('Order Completed')
    await form.getByRole('button', { name: 'Save computed trait' }).click()
    const row = page
      .getByRole('table', { name: 'Computed traits' })
      .getByRole('row')
      .filter({ hasText: 'orders' })
    await row.locator('.badge-live').waitFor({ timeout: SLOW })

    await page.getByLabel('User ID').fill('buyer')
    const computed = page.getByRole('region', { name: 'Computed traits' })
    await until(
      'the computed value in the profile',
      async () => {
        await page.getByRole('button', { name: 'Look up' }).click()
        await computed.waitFor({ timeout: SLOW })
        return (await computed.textContent()) ?? ''
      },
      (text) => text.includes('orders1'),
      SLOW,
      500,
    )
    await assertAccessible(page, 'the Audiences page with a computed trait')
  })

  test('preview a "not in audience" definition built in the page: the member is left out', async () => {
    const buyer = (await sluice.api('GET', '/api/v1/profiles?userId=buyer')).body
    const shopper = (await sluice.api('GET', '/api/v1/profiles?userId=window-shopper')).body
    const form = page.getByRole('form', { name: 'New audience' })
    await form.getByLabel('Type of condition 1', { exact: true }).selectOption('not')
    await form.getByLabel('Type of condition 1.1', { exact: true }).selectOption('audience')
    await form.getByLabel('Audience key (condition 1.1)').fill('buyers')
    await form.getByRole('button', { name: 'Preview' }).click()
    const sample = page.locator('.preview').getByRole('list', { name: 'Sample profiles' })
    await sample.getByRole('link', { name: shopper.userIds[0], exact: true }).waitFor({ timeout: SLOW })
    assert.equal(
      await sample.getByRole('link', { name: buyer.userIds[0], exact: true }).count(),
      0,
      'the buyer is in the audience, so not in its negation',
    )
    await assertAccessible(page, 'the audience builder with not and in-audience')
    await screenshot(page, 'audience-builder-not')
  })

  test("connect another destination to the audience in the page: it gets the member's true", async () => {
    const second = await startReceiver()
    try {
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: 'Second recorder',
        type: 'webhooks',
        sourceIds: [],
        settings: { webhooks: [{ url: `${second.url}/hooks` }] },
      })
      assert.equal(created.status, 201)
      // Back to the page, so that it lists the new destination.
      await open(page, 'Privacy')
      await open(page, 'Audiences')
      const row = page
        .getByRole('table', { name: 'Audiences' })
        .getByRole('row')
        .filter({ hasText: 'buyers' })
      await row.getByText('Recorder', { exact: true }).waitFor({ timeout: SLOW })
      await page.getByRole('button', { name: 'Change destinations of Buyers' }).click()
      const form = page.getByRole('form', { name: 'Destinations of Buyers' })
      await form.getByLabel('Second recorder').check()
      await assertAccessible(page, 'the audience destinations editor')
      await form.getByRole('button', { name: 'Save destinations' }).click()
      await row.getByText('Recorder, Second recorder', { exact: true }).waitFor({ timeout: SLOW })
      const identify = await until(
        'the true identify at the destination added',
        () =>
          second.requests
            .map((request) => JSON.parse(request.body.toString('utf8')))
            .find((body) => body.type === 'identify' && body.userId === 'buyer'),
        (found) => found !== undefined,
        SLOW,
      )
      assert.deepEqual(identify.traits, { buyers: true })
    } finally {
      await second.close()
    }
  })

  test('a viewer sees the lists, and no form or button to change anything', async () => {
    const suppressed = await sluice.api('POST', '/api/v1/regulations', {
      regulationType: 'SUPPRESS_ONLY',
      subjectIds: ['viewer-sees-me'],
    })
    assert.equal(suppressed.status, 201)
    await asViewer(browser, sluice, async (viewerPage) => {
      await open(viewerPage, 'Privacy')
      await viewerPage
        .getByRole('table', { name: 'Suppressed users' })
        .getByRole('cell', { name: 'viewer-sees-me', exact: true })
        .waitFor({ timeout: SLOW })
      await viewerPage
        .getByRole('table', { name: 'Requests, newest first' })
        .getByRole('row')
        .filter({ hasText: 'leaving-user' })
        .waitFor({ timeout: SLOW })
      assert.equal(await viewerPage.locator('form').count(), 0, 'no form')
      assert.equal(await viewerPage.getByRole('main').getByRole('button').count(), 0, 'no button')
      await assertAccessible(viewerPage, 'the Privacy page of a viewer')
      await screenshot(viewerPage, 'privacy-viewer')

      await open(viewerPage, 'Audiences')
      await viewerPage
        .getByRole('table', { name: 'Audiences' })
        .getByRole('cell', { name: 'buyers', exact: true })
        .waitFor({ timeout: SLOW })
      assert.equal(await viewerPage.getByRole('button', { name: 'Save audience' }).count(), 0)
      assert.equal(await viewerPage.getByRole('button', { name: 'Preview' }).count(), 0)
      assert.equal(await viewerPage.getByRole('button', { name: 'Save computed trait' }).count(), 0)
      assert.equal(await viewerPage.getByRole('button', { name: 'Change destinations of Buyers' }).count(), 0)
      // Looking a profile up changes nothing: viewers may.
      await viewerPage.getByRole('button', { name: 'Look up' }).waitFor()
      await assertAccessible(viewerPage, 'the Audiences page of a viewer')
    })
  })

  test('on a phone-sized screen both pages stay accessible', async () => {
    const phone = await admin.newPage()
    try {
      await phone.setViewportSize({ width: 390, height: 844 })
      for (const path of ['privacy', 'audiences']) {
        await phone.goto(`${sluice.url}/${path}`)
        await phone.getByRole('heading', { level: 1 }).waitFor({ timeout: SLOW })
        await phone.getByRole('table').first().waitFor({ timeout: SLOW })
        await assertAccessible(phone, `the ${path} page on a phone`)
        await screenshot(phone, `${path}-phone`)
      }
    } finally {
      await phone.close()
    }
  })
})
