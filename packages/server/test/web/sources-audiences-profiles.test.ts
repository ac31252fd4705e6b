/**
 * The web app's source chart, audience `where` filters, renaming and deleting, and the Profiles page,
 * end to end in real Chromium against a real Sluice: a source's chart counts the calls it stored, an
 * audience filtered on an event property is built, previewed and saved through the builder, audiences
 * and computed traits are renamed and deleted in the page (a viewer gets no such buttons), and a profile
 * looked up by anonymousId lists its calls a page at a time, a write key rotated in the page
 * stops the old key at once, and a token made on the Access page signs a viewer in until it is revoked
 * there.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
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
/** Calls of the anonymous visitor: more than one page of the Profiles page (25 a page). */
const VISITOR_CALLS = 30

describe('sources, audiences and profiles in Chromium', () => {
  let sluice: TestSluice
  let browser: Browser
  let admin: BrowserContext
  let page: Page
  let sourceId = ''
  let writeKey = ''

  const batch = async (calls: Record<string, unknown>[]) => {
    const response = await fetch(`${sluice.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(writeKey), 'content-type': 'application/json' },
      body: JSON.stringify({ batch: calls }),
    })
    assert.equal(response.status, 200)
  }
  const profileOf = (query: string) =>
    until(
      `the profile of ${query}`,
      () => sluice.api('GET', `/api/v1/profiles?${query}`),
      (response) => response.status === 200,
      SLOW,
    )
  const signIn = (target: Page, token: string) => signInAt(target, sluice.url, token)
  const open = (target: Page, name: 'Sources' | 'Audiences' | 'Profiles') => openPage(target, name)

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    const source = await sluice.createSource('Storefront')
    sourceId = source.id
    writeKey = source.writeKey
    await batch([
      { type: 'track', userId: 'big-spender', event: 'Order Completed', properties: { total: 120 } },
      { type: 'track', userId: 'small-spender', event: 'Order Completed', properties: { total: 10 } },
      ...Array.from({ length: VISITOR_CALLS }, (_, index) => ({
        type: 'page',
        anonymousId: 'anon-42',
        name: `Page ${index + 1}`,
        properties: { path: `/p/${index + 1}` },
      })),
    ])
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
    await sluice?.destroy()
  })

  test('the source page charts the calls the source stored', async () => {
    await page.getByRole('link', { name: 'Storefront' }).click()
    await page.getByRole('heading', { name: 'Storefront', level: 1 }).waitFor({ timeout: SLOW })
    const total = 2 + VISITOR_CALLS
    await page.getByText(`${total} calls stored in the last hour.`).waitFor({ timeout: SLOW })
    const chart = page.getByRole('img', { name: 'Calls stored chart' })
    // uPlot draws into a canvas inside the figure once it is loaded.
    await chart.locator('canvas').first().waitFor({ timeout: SLOW })
    await page.getByLabel('Last day').check()
    await page.getByText(`${total} calls stored in the last day.`).waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the source page with its chart')
    await screenshot(page, 'source-chart')
    const series = await sluice.api('GET', `/api/v1/sources/${sourceId}/stats/series`)
    assert.equal(
      series.body.points.reduce((sum: number, point: { accepted: number }) => sum + point.accepted, 0),
      total,
    )
  })

  test('the chart draws in a browser whose language is a POSIX locale name', async () => {
    // Chromium started under LANG=C reports navigator.language as "en-US@posix", which Intl refuses.
    const posix = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      locale: 'en-US@posix',
    })
    try {
      const other = await posix.newPage()
      assert.equal(await other.evaluate(() => navigator.language), 'en-US@posix')
      await signIn(other, sluice.adminToken)
      await other.goto(`${sluice.url}/sources/${sourceId}`)
      const chart = other.getByRole('img', { name: 'Calls stored chart' })
      await chart.locator('canvas').first().waitFor({ timeout: SLOW })
      assert.equal(await other.getByText('The chart could not be drawn').count(), 0)
    } finally {
      await posix.close()
    }
  })

  test('build an audience with a where filter in the page, preview it and save it', async () => {
    const big = (await profileOf('userId=big-spender')).body
    const small = (await profileOf('userId=small-spender')).body
    await open(page, 'Audiences')
    const form = page.getByRole('form', { name: 'New audience' })
    await form.getByLabel('Audience name').fill('Big spenders')
    await form.getByLabel('Event (condition 1.1)').fill('Order Completed')
    await form.getByRole('button', { name: 'Add where to condition 1.1' }).click()
    await form.getByLabel('Where property (condition 1.1, where 1)').fill('total')
    await form.getByLabel('Where operator (condition 1.1, where 1)').selectOption('>=')
    await form.getByLabel('Where value (condition 1.1, where 1)').fill('100')
    // A second filter, then removed: only the first one is sent.
    await form.getByRole('button', { name: 'Add where to condition 1.1' }).click()
    await form.getByLabel('Where property (condition 1.1, where 2)').fill('currency')
    await form.getByLabel('Where operator (condition 1.1, where 2)').selectOption('exists')
    assert.equal(
      await form.getByLabel('Where value (condition 1.1, where 2)').count(),
      0,
      'exists takes no value',
    )
    await assertAccessible(page, 'the audience builder with where filters')
    await screenshot(page, 'audience-builder-where')
    await form.getByRole('button', { name: 'Remove where 2 of condition 1.1' }).click()

    await form.getByRole('button', { name: 'Preview' }).click()
    const preview = page.locator('.preview')
    await preview.getByText(/1\s+profile now/).waitFor({ timeout: SLOW })
    const sample = preview.getByRole('list', { name: 'Sample profiles' })
    await sample.getByRole('link', { name: big.userIds[0], exact: true }).waitFor()
    assert.equal(
      await sample.getByRole('link', { name: small.userIds[0], exact: true }).count(),
      0,
      'the order of 10 does not pass total >= 100',
    )

    await form.getByRole('button', { name: 'Save audience' }).click()
    const row = page
      .getByRole('table', { name: 'Audiences' })
      .getByRole('row')
      .filter({ hasText: 'big_spenders' })
    await row.locator('.badge-live').waitFor({ timeout: SLOW })
    await row.getByRole('cell', { name: '1', exact: true }).waitFor({ timeout: SLOW })
    const [saved] = (await sluice.api('GET', '/api/v1/audiences')).body.audiences
    assert.deepEqual(saved.definition, {
      all: [{ event: 'Order Completed', where: [{ property: 'total', op: '>=', value: 100 }] }],
    })
  })

  test('a computed trait with a where filter, made in the page', async () => {
    const form = page.getByRole('form', { name: 'New computed trait' })
    await form.getByLabel('Computed trait name').fill('Large orders')
    await form.getByLabel('Track event').fill('Order Completed')
    await form.getByRole('button', { name: 'Add where to new computed trait' }).click()
    // No property yet: the API's refusal is shown at that filter's field.
    await form.getByRole('button', { name: 'Save computed trait' }).click()
    await form
      .getByLabel('Where property (new computed trait, where 1)')
      .and(page.locator('[aria-invalid="true"]'))
      .waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the computed trait form with an error at a where filter')
    await form.getByLabel('Where property (new computed trait, where 1)').fill('total')
    await form.getByLabel('Where operator (new computed trait, where 1)').selectOption('in')
    await form.getByLabel('Where values (comma-separated) (new computed trait, where 1)').fill('120, 130')
    await form.getByRole('button', { name: 'Save computed trait' }).click()
    const row = page
      .getByRole('table', { name: 'Computed traits' })
      .getByRole('row')
      .filter({ hasText: 'large_orders' })
    await row.locator('.badge-live').waitFor({ timeout: SLOW })
    const [trait] = (await sluice.api('GET', '/api/v1/computed-traits')).body.computedTraits
    assert.deepEqual(trait.where, [{ property: 'total', op: 'in', value: [120, 130] }])
    const values = await until(
      'the computed values',
      async () => [
        (await sluice.api('GET', '/api/v1/profiles?userId=big-spender')).body.computedTraits.large_orders,
        (await sluice.api('GET', '/api/v1/profiles?userId=small-spender')).body.computedTraits.large_orders,
      ],
      ([bigValue, smallValue]) => bigValue === 1 && smallValue === 0,
      SLOW,
    )
    assert.deepEqual(values, [1, 0])
    await assertAccessible(page, 'the Audiences page with a computed trait filtered by where')
  })

  test('rename and delete an audience and a computed trait in the page; a viewer has no such buttons', async () => {
    const audiences = page.getByRole('table', { name: 'Audiences' })
    await page.getByRole('button', { name: 'Rename Big spenders' }).click()
    const rename = page.getByRole('form', { name: 'Rename Big spenders' })
    await rename.getByLabel('New name for Big spenders').fill('')
    await rename.getByRole('button', { name: 'Save name' }).click()
    // The API's refusal of an empty name is shown at the field.
    await rename
      .getByLabel('New name for Big spenders')
      .and(page.locator('[aria-invalid="true"]'))
      .waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the rename form with an error')
    await rename.getByLabel('New name for Big spenders').fill('Whales')
    await rename.getByRole('button', { name: 'Save name' }).click()
    const renamed = audiences.getByRole('row').filter({ hasText: 'Whales' })
    await renamed.waitFor({ timeout: SLOW })
    // The key never changes.
    await renamed.getByRole('cell', { name: 'big_spenders', exact: true }).waitFor()

    await page.getByRole('button', { name: 'Rename Large orders' }).click()
    await page.getByLabel('New name for Large orders').fill('Orders over 100')
    await page.getByRole('button', { name: 'Save name' }).click()
    const traits = page.getByRole('table', { name: 'Computed traits' })
    await traits.getByRole('row').filter({ hasText: 'Orders over 100' }).waitFor({ timeout: SLOW })
    await screenshot(page, 'audiences-renamed')

    // A viewer sees the renamed items and no button to rename or delete them.
    await asViewer(browser, sluice, async (viewerPage) => {
      await open(viewerPage, 'Audiences')
      await viewerPage
        .getByRole('table', { name: 'Audiences' })
        .getByRole('cell', { name: 'Whales', exact: true })
        .waitFor({ timeout: SLOW })
      await viewerPage
        .getByRole('table', { name: 'Computed traits' })
        .getByRole('cell', { name: 'Orders over 100', exact: true })
        .waitFor({ timeout: SLOW })
      assert.equal(await viewerPage.getByRole('button', { name: /^(Rename|Delete) / }).count(), 0)
      assert.equal(await viewerPage.getByRole('columnheader', { name: 'Actions' }).count(), 0)
      await assertAccessible(viewerPage, 'the Audiences page of a viewer')
    })

    await page.getByRole('button', { name: 'Delete Whales' }).click()
    await page
      .getByRole('dialog', { name: 'Delete the audience Whales?' })
      .getByRole('button', { name: 'Delete' })
      .click()
    await page.getByText('No audiences yet.').waitFor({ timeout: SLOW })
    await page.getByRole('button', { name: 'Delete Orders over 100' }).click()
    await page
      .getByRole('dialog', { name: 'Delete the computed trait Orders over 100?' })
      .getByRole('button', { name: 'Delete' })
      .click()
    await page.getByText('No computed traits yet.').waitFor({ timeout: SLOW })
    assert.deepEqual((await sluice.api('GET', '/api/v1/audiences')).body.audiences, [])
    assert.deepEqual((await sluice.api('GET', '/api/v1/computed-traits')).body.computedTraits, [])
  })

  test('the Profiles page looks a profile up by anonymousId and pages through its calls', async () => {
    const visitor = await until(
      'every call of the visitor in the profile',
      async () => {
        const found = await sluice.api('GET', '/api/v1/profiles?anonymousId=anon-42')
        if (found.status !== 200) return 0
        const events = await sluice.api('GET', `/api/v1/profiles/${found.body.id}/events?limit=100`)
        return events.body.events.length as number
      },
      (count) => count === VISITOR_CALLS,
      SLOW,
    )
    assert.equal(visitor, VISITOR_CALLS)
    await open(page, 'Profiles')
    await page.getByLabel('Look up by').selectOption('anonymousId')
    await page.getByLabel('Anonymous ID').fill('anon-42')
    await page.getByRole('button', { name: 'Look up' }).click()
    const profile = page.getByRole('region', { name: 'Profile' })
    await profile.getByText('anonymous ids anon-42').waitFor({ timeout: SLOW })
    const calls = page.getByRole('table', { name: 'Calls of the profile, newest first' })
    await calls.waitFor({ timeout: SLOW })
    await page.getByText('25 calls shown; older ones remain.').waitFor({ timeout: SLOW })
    // Newest first.
    await calls.getByRole('row').nth(1).getByRole('cell', { name: 'page', exact: true }).waitFor()
    // A page call shows its name where a track call shows its event.
    await calls
      .getByRole('row')
      .nth(1)
      .getByRole('cell', { name: `Page ${VISITOR_CALLS}`, exact: true })
      .waitFor()
    await assertAccessible(page, 'the Profiles page with a profile and its calls')
    await screenshot(page, 'profile')

    await page.getByRole('button', { name: 'Load older calls' }).click()
    await page.getByText(`${VISITOR_CALLS} calls shown.`).waitFor({ timeout: SLOW })
    assert.equal(await calls.getByRole('row').count(), VISITOR_CALLS + 1, 'every call, and the header row')
    assert.equal(await page.getByRole('button', { name: 'Load older calls' }).count(), 0)
    await calls.locator('summary').first().click()
    await calls.getByText('"path": "/p/').first().waitFor()

    // The lookup is in the address, so it can be linked to and survives a reload.
    assert.match(page.url(), /\/profiles\?anonymousId=anon-42$/)
    await page.reload()
    await page
      .getByRole('region', { name: 'Profile' })
      .getByText('anonymous ids anon-42')
      .waitFor({ timeout: SLOW })

    await page.getByLabel('Look up by').selectOption('userId')
    await page.getByLabel('User ID').fill('nobody-here')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page.getByText('No profile has the user id nobody-here.').waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the Profiles page with no profile found')
  })

  test('on a phone-sized screen the source and Profiles pages stay accessible', async () => {
    const phone = await admin.newPage()
    try {
      await phone.setViewportSize({ width: 390, height: 844 })
      await phone.goto(`${sluice.url}/sources/${sourceId}`)
      await phone
        .getByRole('img', { name: 'Calls stored chart' })
        .locator('canvas')
        .first()
        .waitFor({ timeout: SLOW })
      await assertAccessible(phone, 'the source page on a phone')
      await screenshot(phone, 'source-chart-phone')
      await phone.goto(`${sluice.url}/profiles?anonymousId=anon-42`)
      await phone
        .getByRole('table', { name: 'Calls of the profile, newest first' })
        .waitFor({ timeout: SLOW })
      await assertAccessible(phone, 'the Profiles page on a phone')
      await screenshot(phone, 'profile-phone')
    } finally {
      await phone.close()
    }
  })

  test('rotate the write key in the page: the old key is refused at once, the new one shown is accepted', async () => {
    const track = (key: string) =>
      fetch(`${sluice.url}/v1/track`, {
        method: 'POST',
        headers: { authorization: writeKeyAuth(key), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'rotation-check', event: 'Key Rotated' }),
      })
    await page.goto(`${sluice.url}/sources/${sourceId}`)
    await page.getByRole('heading', { name: 'Storefront', level: 1 }).waitFor({ timeout: SLOW })
    await page.getByRole('button', { name: 'Rotate write key' }).click()
    await page
      .getByRole('dialog', { name: 'Rotate the write key?' })
      .getByRole('button', { name: 'Rotate' })
      .click()
    const shown = page.locator('code.write-key')
    await until(
      'the rotated key in the page',
      async () => (await shown.textContent()) ?? '',
      (text) => text !== '' && !text.includes('•') && text !== writeKey,
      SLOW,
    )
    const rotated = (await shown.textContent()) ?? ''
    assert.equal(rotated, (await sluice.api('GET', `/api/v1/sources/${sourceId}`)).body.writeKey)
    assert.equal((await track(writeKey)).status, 401, 'the old key is refused')
    assert.equal((await track(rotated)).status, 200, 'the new key is accepted')
    writeKey = rotated
  })

  test('the Access page: a token created there signs in as a viewer; revoked there, its session ends', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Access', exact: true })
      .click()
    await page.getByRole('heading', { name: 'Access', level: 1 }).waitFor({ timeout: SLOW })
    await page.getByLabel('Token name').fill('On call')
    await page.getByLabel('Role').selectOption('viewer')
    await page.getByRole('button', { name: 'Create token' }).click()
    const shown = page.locator('code.new-token')
    await shown.waitFor({ timeout: SLOW })
    const token = (await shown.textContent()) ?? ''
    assert.match(token, /^\S{20,}$/, 'the new token is shown once')
    const row = page.getByRole('row').filter({ hasText: 'On call' })
    await row.getByRole('cell', { name: 'viewer', exact: true }).waitFor({ timeout: SLOW })
    await assertAccessible(page, 'the Access page')
    await screenshot(page, 'access')

    const onCall = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
    try {
      const viewerPage = await onCall.newPage()
      await signIn(viewerPage, token)
      // A viewer has no Access page.
      assert.equal(
        await viewerPage
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: 'Access' })
          .count(),
        0,
      )
      await row.getByRole('button', { name: 'Revoke On call' }).click()
      await page
        .getByRole('dialog', { name: 'Revoke the token On call?' })
        .getByRole('button', { name: 'Revoke' })
        .click()
      await row.waitFor({ state: 'detached', timeout: SLOW })
      const listed = await sluice.api('GET', '/api/v1/tokens')
      assert.ok(!listed.body.tokens.some((each: { name: string }) => each.name === 'On call'))
      // The viewer's session cookie is refused from now on: the page's next API call is a 401.
      await until(
        "the revoked token's session",
        () => viewerPage.evaluate(async () => (await fetch('/api/v1/sources')).status),
        (status) => status === 401,
        SLOW,
      )
      await viewerPage.reload()
      await viewerPage.getByLabel('Access token').waitFor({ timeout: SLOW })
    } finally {
      await onCall.close()
    }
  })
})
