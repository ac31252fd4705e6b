// Audience definitions checked as a tree: cycles through other audiences and the JSON pointer of the
// node at fault; and membership evaluation of every node kind.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type AudienceNode, checkDefinition } from '../../src/domain/audiences.ts'
import { ValidationError } from '../../src/domain/errors.ts'
import { factsFromCalls, MembershipEvaluator } from '../../src/profile/audience-membership.ts'

const refusal = (run: () => unknown): ValidationError => {
  try {
    run()
  } catch (error) {
    if (error instanceof ValidationError) return error
    throw error
  }
  assert.fail('expected a ValidationError')
}

describe('audience definitions', () => {
  test('a cycle through other audiences is refused at the reference that closes it', () => {
    const audiences = new Map<string, AudienceNode>([
      ['a', { any: [{ event: 'E' }, { audience: 'b' }] }],
      ['b', { not: { audience: 'a' } }],
    ])
    const error = refusal(() =>
      checkDefinition(
        { all: [{ audience: 'a' }] },
        { computedTraitKeys: new Set(), audiences, ownKey: null },
      ),
    )
    assert.equal(error.field, '/definition/all/0/audience/any/1/audience/not/audience')
    assert.match(error.message, /cycle: a → b → a/)
    // The same audiences without the back reference are fine.
    audiences.set('b', { event: 'F' })
    checkDefinition({ all: [{ audience: 'a' }] }, { computedTraitKeys: new Set(), audiences, ownKey: null })
  })

  test('membership: every node kind', () => {
    const now = Date.UTC(2026, 0, 31)
    const calls = [
      { seq: 1, event: 'Order', timestamp: now - 40 * 86_400_000, properties: { total: 5 } },
      { seq: 2, event: 'Order', timestamp: now - 86_400_000, properties: { total: 50 } },
    ]
    const evaluator = new MembershipEvaluator(
      factsFromCalls(calls, { plan: 'pro', address: { city: 'Oslo' } }, { ltv: 55 }),
      now,
      new Map<string, AudienceNode>([['buyers', { event: 'Order' }]]),
    )
    const holds = (node: AudienceNode) => evaluator.holds(node)
    assert.equal(holds({ event: 'Order', count: { op: '=', value: 2 } }), true)
    assert.equal(holds({ event: 'Order', withinDays: 30, count: { op: '=', value: 1 } }), true)
    assert.equal(holds({ event: 'Order', where: [{ property: 'total', op: '>', value: 60 }] }), false)
    assert.equal(holds({ event: 'Order', count: { op: '<', value: 1 } }), false)
    assert.equal(holds({ trait: 'address.city', op: '=', value: 'Oslo' }), true)
    assert.equal(holds({ trait: 'missing', op: 'not_exists' }), true)
    assert.equal(holds({ computedTrait: 'ltv', op: '>=', value: 55 }), true)
    assert.equal(
      holds({ all: [{ audience: 'buyers' }, { not: { trait: 'plan', op: 'in', value: ['free'] } }] }),
      true,
    )
    assert.equal(holds({ any: [{ audience: 'nobody' }, { event: 'Signup' }] }), false)
  })
})
