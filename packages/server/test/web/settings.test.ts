/**
 * The Settings page in real Chromium: "Export configuration" downloads the configuration document,
 * the same the API exports (placeholders; secrets only when an admin asks), and a viewer gets
 * placeholders without the choice.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import {
  assertAccessible,
  asViewer,
  openPage,
  requireBuiltApp,
  SLOW,
  screenshot,
  signIn,
} from './web-harness.ts'

/** Clicks "Export configuration" and answers the downloaded file's name and parsed content. */
async function exportFromPage(page: Page): Promise<{ name: string; document: any }> {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: SLOW }),
    page.getByRole('button', { name: 'Export configuration' }).click(),
  ])
  const path = await download.path()
  return { name: download.suggestedFilename(), document: JSON.parse(await readFile(path, 'utf8')) }
}

describe('the Settings page in Chromium', () => {
  let sluice: TestSluice
  let browser: Browser
  let writeKey = ''

  before(async () => {
    requireBuiltApp()
    sluice = await startTestSluice()
    writeKey = (await sluice.createSource('Web shop')).writeKey
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await sluice?.destroy()
  })

  test('an admin downloads the configuration, with secrets only when asked', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      acceptDownloads: true,
    })
    try {
      const page = await context.newPage()
      await signIn(page, sluice.url, sluice.adminToken)
      await openPage(page, 'Settings')
      await assertAccessible(page, 'the Settings page')
      await screenshot(page, 'settings')

      const plain = await exportFromPage(page)
      assert.equal(plain.name, 'sluice.json')
      assert.deepEqual(plain.document, (await sluice.api('GET', '/api/v1/config')).body)
      assert.deepEqual(plain.document.sources['Web shop'].writeKey, { $secret: 'sources/Web shop/writeKey' })

      await page.getByLabel('Include secrets and write keys').check()
      const withSecrets = await exportFromPage(page)
      assert.equal(withSecrets.document.sources['Web shop'].writeKey, writeKey)
    } finally {
      await context.close()
    }
  })

  test('a viewer downloads placeholders and is offered no secrets', async () => {
    await asViewer(browser, sluice, async (page) => {
      await openPage(page, 'Settings')
      assert.equal(await page.getByLabel('Include secrets and write keys').count(), 0)
      const { document } = await exportFromPage(page)
      assert.deepEqual(document.sources['Web shop'].writeKey, { $secret: 'sources/Web shop/writeKey' })
    })
  })

  test('an export Sluice refuses shows why on the page', async () => {
    await sluice.createSource('Web shop')
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      acceptDownloads: true,
    })
    try {
      const page = await context.newPage()
      await signIn(page, sluice.url, sluice.adminToken)
      await openPage(page, 'Settings')
      await page.getByRole('button', { name: 'Export configuration' }).click()
      await page
        .getByRole('alert')
        .getByText(/used more than once/)
        .waitFor({ timeout: SLOW })
    } finally {
      await context.close()
    }
  })
})
