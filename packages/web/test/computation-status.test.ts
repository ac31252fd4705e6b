/**
 * The Audiences page in real Chromium against a real Sluice: an audience or computed trait whose
 * evaluation failed shows `failed` and why, where its status is shown. (The API sends `failed` with an
 * `error`; the app once typed the status as `computing | live` and showed no reason.)
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Audience, ComputedTrait } from '@sluice/server/api'
import type { Browser, Page } from 'playwright-core'
import type { AudienceNode } from '../../server/src/domain/audiences.ts'
import { launchChromium } from '../../server/test/helpers/browser.ts'
import { startTestSluice, type TestSluice } from '../../server/test/helpers/sluice.ts'
import { writeKeyAuth } from '../../server/test/manage/helpers.ts'
import { until } from '../../server/test/reliability/helpers.ts'
import {
  assertAccessible,
  openPage,
  requireBuiltApp,
  SLOW,
  signIn,
} from '../../server/test/web/web-harness.ts'

let sluice: TestSluice
let browser: Browser
let page: Page

before(async () => {
  requireBuiltApp()
  sluice = await startTestSluice()
  browser = await launchChromium()
  page = await (
    await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
  ).newPage()
  await signIn(page, sluice.url, sluice.adminToken)
})
after(async () => {
  await browser?.close()
  await sluice?.destroy()
})

test('a failed audience and a failed computed trait show `failed` and the error, and the others stay live', async () => {
  const source = await sluice.createSource('Shop')
  const created = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await sluice.api('POST', `/api/v1${path}`, body)
    assert.equal(response.status, 201, JSON.stringify(response.body))
    return response.body as T
  }
  const fragileAudience = await created<Audience>('/audiences', {
    name: 'Fragile buyers',
    definition: { event: 'Order Completed' },
  })
  await created<Audience>('/audiences', { name: 'Sturdy buyers', definition: { event: 'Order Completed' } })
  const fragileTrait = await created<ComputedTrait>('/computed-traits', {
    name: 'Fragile orders',
    kind: 'count',
    event: 'Order Completed',
  })
  // A filter the evaluator cannot run (a property path that is no text). The API refuses it; the store
  // takes definitions as given, which is how one that a later version reads differently would arrive.
  const where = [{ property: 42 as unknown as string, op: 'exists' as const }]
  await sluice.store.updateAudience(fragileAudience.id, {
    definition: { event: 'Order Completed', where } as AudienceNode,
  })
  await sluice.store.updateComputedTrait(fragileTrait.id, {
    definition: { kind: 'count', event: 'Order Completed', property: null, where, withinDays: null },
  })
  const call = await fetch(`${sluice.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'ada', event: 'Order Completed' }),
  })
  assert.equal(call.status, 200)
  const failed = async (path: string) => {
    const { body } = await sluice.api('GET', `/api/v1${path}`)
    return body as { status: string; error: string | null }
  }
  const audience = await until(
    'the audience failed',
    () => failed(`/audiences/${fragileAudience.id}`),
    (it) => it.status === 'failed',
    SLOW,
  )
  const trait = await until(
    'the computed trait failed',
    () => failed(`/computed-traits/${fragileTrait.id}`),
    (it) => it.status === 'failed',
    SLOW,
  )
  assert.match(audience.error ?? '', /\S/)
  assert.match(trait.error ?? '', /\S/)

  await openPage(page, 'Audiences')
  const row = (table: string, name: string) =>
    page.getByRole('table', { name: table }).getByRole('row').filter({ hasText: name })
  await row('Audiences', 'Sturdy buyers').locator('.badge-live').waitFor({ timeout: SLOW })
  const fragileRow = row('Audiences', 'Fragile buyers')
  await fragileRow.locator('.badge-failed').waitFor({ timeout: SLOW })
  await fragileRow.getByText(audience.error!, { exact: true }).waitFor({ timeout: SLOW })
  const traitRow = row('Computed traits', 'Fragile orders')
  await traitRow.locator('.badge-failed').waitFor({ timeout: SLOW })
  await traitRow.getByText(trait.error!, { exact: true }).waitFor({ timeout: SLOW })
  assert.equal(await row('Audiences', 'Sturdy buyers').locator('.computation-error').count(), 0)
  await assertAccessible(page, 'the Audiences page with failed computations')
})
