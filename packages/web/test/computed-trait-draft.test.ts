/**
 * The computed-trait form's model, without a browser: the body a filled-in form sends.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { emptyComputedTrait, toComputedTraitBody } from '../src/model/computed-trait-draft.ts'

test('a count sends no property, even one typed before the kind was switched to count', () => {
  const body = toComputedTraitBody({
    ...emptyComputedTrait(),
    name: 'Orders',
    event: ' Order Completed ',
    property: 'total',
  })
  assert.deepEqual(body, { name: 'Orders', kind: 'count', event: 'Order Completed', destinationIds: [] })
})

test('a sum sends its property, filters and window; empty inputs are left out for the API defaults', () => {
  const draft = {
    ...emptyComputedTrait(),
    name: 'Revenue',
    kind: 'sum' as const,
    event: 'Order Completed',
    property: ' total ',
    where: [{ property: 'currency', op: '=' as const, value: 'EUR' }],
    withinDays: '30',
    destinationIds: ['dst_1'],
  }
  assert.deepEqual(toComputedTraitBody(draft), {
    name: 'Revenue',
    kind: 'sum',
    event: 'Order Completed',
    property: 'total',
    where: [{ property: 'currency', op: '=', value: 'EUR' }],
    withinDays: 30,
    destinationIds: ['dst_1'],
  })
  assert.deepEqual(toComputedTraitBody({ ...draft, property: ' ', where: [], withinDays: ' ' }), {
    name: 'Revenue',
    kind: 'sum',
    event: 'Order Completed',
    destinationIds: ['dst_1'],
  })
})
