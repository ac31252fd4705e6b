/**
 * The audience builder's model, without a browser: what a draft typed in the form sends as the
 * definition, and that the API's errors, which point into that definition, land on the input typed.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ApiError, errorConcerns } from '../src/api/client.ts'
import {
  DRAFT_KINDS,
  type Draft,
  emptyDraft,
  fromDefinition,
  pointers,
  toDefinition,
  toWhere,
  type WhereDraft,
} from '../src/model/audience-draft.ts'

/** The value a JSON pointer names in `document`, as the API resolves its error's `field`. */
function resolve(document: unknown, pointer: string): unknown {
  let at = document
  for (const token of pointer.split('/').slice(1)) {
    assert.ok(at !== null && typeof at === 'object', `${pointer}: nothing at "${token}"`)
    at = (at as Record<string, unknown>)[token.replaceAll('~1', '/').replaceAll('~0', '~')]
  }
  return at
}

const where = (property: string, op: WhereDraft['op'], value: string): WhereDraft => ({ property, op, value })

/** Every kind of node, with inputs as a user types them (stray spaces, numbers as text). */
const draft: Draft = {
  kind: 'all',
  children: [
    {
      kind: 'event',
      event: ' Order Completed ',
      where: [where(' total ', '>=', '25'), where('coupon', 'exists', 'ignored')],
      countOp: '>=',
      countValue: '3',
      withinDays: '30',
    },
    {
      kind: 'any',
      children: [
        { kind: 'trait', name: 'plan', op: 'in', value: 'pro, team,3' },
        { kind: 'computedTrait', name: ' orders_last_30_days ', op: '>', value: '2' },
      ],
    },
    { kind: 'not', child: { kind: 'audience', key: ' churned ' } },
    { kind: 'trait', name: 'beta', op: '=', value: 'true' },
  ],
}

describe('the audience draft', () => {
  test('becomes the definition the API takes: trimmed, numbers and booleans typed, `in` as a list', () => {
    assert.deepEqual(toDefinition(draft), {
      all: [
        {
          event: 'Order Completed',
          where: [
            { property: 'total', op: '>=', value: 25 },
            { property: 'coupon', op: 'exists' },
          ],
          count: { op: '>=', value: 3 },
          withinDays: 30,
        },
        {
          any: [
            { trait: 'plan', op: 'in', value: ['pro', 'team', 3] },
            { computedTrait: 'orders_last_30_days', op: '>', value: 2 },
          ],
        },
        { not: { audience: 'churned' } },
        { trait: 'beta', op: '=', value: true },
      ],
    })
  })

  test('leaves out what was not filled in: no count means at least once, no days means all history', () => {
    assert.deepEqual(toDefinition(emptyDraft('event')), { event: '' })
    assert.deepEqual(toDefinition(emptyDraft('all')), { all: [{ event: '' }] })
    assert.deepEqual(toDefinition(emptyDraft('not')), { not: { event: '' } })
    assert.deepEqual(toDefinition(emptyDraft('trait')), { trait: '', op: '=', value: '' })
    assert.deepEqual(toDefinition(emptyDraft('audience')), { audience: '' })
  })

  test('a number typed wrong is sent as typed, so that the API can say which input is wrong', () => {
    const typed: Draft = {
      kind: 'event',
      event: '',
      where: [],
      countOp: '=',
      countValue: 'ten',
      withinDays: '7.5',
    }
    const definition = toDefinition(typed)
    assert.deepEqual(definition, { event: '', count: { op: '=', value: 'ten' }, withinDays: 7.5 })
  })

  test('text that looks like no number stays text; `null` is null', () => {
    assert.deepEqual(
      toWhere([where('city', '=', ' Paris '), where('tag', '=', 'null'), where('n', '!=', '')]),
      [
        { property: 'city', op: '=', value: ' Paris ' },
        { property: 'tag', op: '=', value: null },
        { property: 'n', op: '!=', value: '' },
      ],
    )
  })

  test('every kind the form offers starts as a node the API knows', () => {
    assert.deepEqual(DRAFT_KINDS, ['all', 'any', 'not', 'event', 'trait', 'computedTrait', 'audience'])
    for (const kind of DRAFT_KINDS) {
      const node = toDefinition(emptyDraft(kind))
      assert.ok(kind in node, `${kind}: ${JSON.stringify(node)}`)
    }
  })
})

describe("the inputs' JSON pointers", () => {
  // The request body the API checks, and whose pointers its 400 answers carry.
  const body = { definition: toDefinition(draft) }
  const root = '/definition'
  const all = pointers.group(root, 'all')

  test("name where each input's value lands in the request", () => {
    const event = pointers.event(pointers.item(all, 0))
    assert.equal(resolve(body, event.event), 'Order Completed')
    assert.equal(resolve(body, event.countOp), '>=')
    assert.equal(resolve(body, event.countValue), 3)
    assert.equal(resolve(body, event.withinDays), 30)
    const firstWhere = pointers.where(event.where, 0)
    assert.deepEqual(resolve(body, firstWhere.filter), { property: 'total', op: '>=', value: 25 })
    assert.equal(resolve(body, firstWhere.property), 'total')
    assert.equal(resolve(body, firstWhere.op), '>=')
    assert.equal(resolve(body, firstWhere.value), 25)

    const any = pointers.group(pointers.item(all, 1), 'any')
    const trait = pointers.comparison(pointers.item(any, 0), 'trait')
    assert.equal(resolve(body, trait.name), 'plan')
    assert.equal(resolve(body, trait.op), 'in')
    assert.deepEqual(resolve(body, trait.value), ['pro', 'team', 3])
    const computed = pointers.comparison(pointers.item(any, 1), 'computedTrait')
    assert.equal(resolve(body, computed.name), 'orders_last_30_days')
    assert.equal(resolve(body, computed.value), 2)

    assert.equal(resolve(body, pointers.audience(pointers.not(pointers.item(all, 2)))), 'churned')
  })

  test("the API's error about an input concerns that input and the nodes around it, no other", () => {
    const any = pointers.group(pointers.item(all, 1), 'any')
    const computed = pointers.comparison(pointers.item(any, 1), 'computedTrait')
    const error = new ApiError(400, 'validation_failed', 'No computed trait has that key.', computed.name)
    assert.equal(errorConcerns(error, computed.name), true, 'the input itself')
    assert.equal(errorConcerns(error, pointers.item(any, 1)), true, 'its node (marked as failed)')
    assert.equal(errorConcerns(error, root), true, 'the whole definition (so no box repeats it)')
    assert.equal(errorConcerns(error, pointers.item(any, 1), true), false, 'not exactly its node')
    assert.equal(errorConcerns(error, computed.op), false, 'not its operator')
    assert.equal(errorConcerns(error, pointers.item(any, 0)), false, 'not the node before it')

    // `/definition/all/1` is not a prefix of `/definition/all/10`: node 2 stays unmarked by node 11's error.
    const eleventh = new ApiError(
      400,
      'validation_failed',
      'Unknown operator.',
      `${pointers.item(all, 10)}/op`,
    )
    assert.equal(errorConcerns(eleventh, pointers.item(all, 1)), false)
    assert.equal(errorConcerns(eleventh, pointers.item(all, 10)), true)
  })

  test('only an API error with a field is about a field', () => {
    assert.equal(errorConcerns(new ApiError(500, 'internal', 'Something broke.'), root), false)
    assert.equal(errorConcerns(new Error('offline'), root), false)
    assert.equal(errorConcerns(undefined, root), false)
  })
})

test('a saved definition opens in the builder and saves back unchanged', () => {
  const saved = {
    all: [
      {
        event: 'Order Completed',
        where: [
          { property: 'total', op: '>=' as const, value: 100 },
          { property: 'coupon', op: 'exists' as const },
          { property: 'country', op: 'in' as const, value: ['DE', 'FR'] },
        ],
        count: { op: '>=' as const, value: 2 },
        withinDays: 30,
      },
      { not: { trait: 'plan', op: '=' as const, value: 'free' } },
      { any: [{ computedTrait: 'orders_total', op: '>' as const, value: 3 }, { audience: 'vips' }] },
      { event: 'Signed Up' },
    ],
  }
  assert.deepEqual(toDefinition(fromDefinition(saved)), saved)
})
