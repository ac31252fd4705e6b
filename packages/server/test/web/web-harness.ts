/**
 * What the web-app browser tests share: a real Sluice serving the built app, real Chromium, axe-core for
 * accessibility, and screenshots a reviewer can look at (written to packages/web/test-results/, which
 * git ignores).
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { WEB_APP_DIR } from '../../src/app/web-app.ts'
import type { TestSluice } from '../helpers/sluice.ts'

export const SCREENSHOT_DIR = resolve(import.meta.dirname, '../../../web/test-results/screenshots')
const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/** The tests need the built app; `npm install` (the root `prepare` script) or `npm run build` makes it. */
export function requireBuiltApp(): void {
  assert.ok(
    existsSync(join(WEB_APP_DIR, 'index.html')),
    `The web app is not built (${WEB_APP_DIR} has no index.html). Run "npm install" or "npm run build" at the repository root.`,
  )
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true })
}

/** Runs axe-core on the page as it is now and fails on any serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ path: AXE_SCRIPT })
  const violations = await page.evaluate(async () => {
    // axe-core is injected as a global script.
    const { axe, document } = globalThis as any
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return (
      result.violations as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]
    )
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        targets: violation.nodes.slice(0, 5).map((node) => node.target.join(' ')),
      }))
  })
  assert.deepEqual(violations, [], `axe-core found serious or critical violations on ${what}`)
}

/** How long a browser step may wait for the app (a loaded machine runs Chromium slowly). */
export const SLOW = 60_000

/** Signs in at `baseUrl` with `token` and waits for the first page, Sources. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(baseUrl)
  await page.getByLabel('Access token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Sources' }).waitFor({ timeout: SLOW })
}

/** Follows the main navigation's link `name` and waits for that page's heading. */
export async function openPage(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click()
  await page.getByRole('heading', { name, level: 1 }).waitFor({ timeout: SLOW })
}

/**
 * Runs `work` on a page signed in with a new viewer token ("Support"), in a browser context of its
 * own that is closed afterwards.
 */
export async function asViewer(
  browser: Browser,
  sluice: Pick<TestSluice, 'url' | 'api'>,
  work: (page: Page) => Promise<void>,
): Promise<void> {
  const token = await sluice.api('POST', '/api/v1/tokens', { name: 'Support', role: 'viewer' })
  const viewer = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
  try {
    const page = await viewer.newPage()
    await signIn(page, sluice.url, token.body.token)
    await work(page)
  } finally {
    await viewer.close()
  }
}
