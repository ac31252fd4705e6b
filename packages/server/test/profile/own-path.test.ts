// User-given paths and names read own properties only: a path or trait named after what every object
// inherits (`constructor`, `toString`, `valueOf`, `hasOwnProperty`, `__proto__`) matches nothing
// unless a call or profile really has it, and a trait with such a name is stored like any other.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ownValue, setOwn, valueAtPath } from '../../src/lib/own-path.ts'
import { factsFromCalls, MembershipEvaluator } from '../../src/profile/audience-membership.ts'
import { computeTraitValue } from '../../src/profile/computed-value.ts'
import { planBatch } from '../../src/profile/identity-resolution.ts'
import { matchesAll } from '../../src/profile/where.ts'

const INHERITED = ['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty'] as const
const NOW = Date.UTC(2026, 5, 1)

describe('own paths', () => {
  test('inherited names and paths through them find nothing', () => {
    for (const name of INHERITED) {
      assert.equal(ownValue({}, name), undefined, name)
      assert.equal(valueAtPath({}, name), undefined, name)
      assert.equal(valueAtPath({ address: { city: 'Oslo' } }, `address.${name}`), undefined, name)
      assert.equal(valueAtPath({ address: 'Oslo' }, `address.${name}`), undefined, name)
      assert.equal(valueAtPath({}, `${name}.name`), undefined, name)
    }
  })

  test('own properties of those names are found, whole or dotted', () => {
    for (const name of INHERITED) {
      const properties = JSON.parse(`{"${name}": 7, "nested": {"${name}": "x"}}`)
      assert.equal(valueAtPath(properties, name), 7, name)
      assert.equal(valueAtPath(properties, `nested.${name}`), 'x', name)
    }
    assert.equal(valueAtPath({ 'a.b': 1, a: { b: 2 } }, 'a.b'), 1)
    assert.equal(valueAtPath({ a: { b: 2 } }, 'a.b'), 2)
    assert.equal(valueAtPath({ a: [5] }, 'a.0'), undefined)
  })

  test('setOwn stores __proto__ as a property, not as the prototype', () => {
    const record: Record<string, unknown> = {}
    setOwn(record, '__proto__', { admin: true })
    assert.equal(Object.getPrototypeOf(record), Object.prototype)
    assert.equal((record as { admin?: unknown }).admin, undefined)
    assert.equal(JSON.stringify(record), '{"__proto__":{"admin":true}}')
  })

  test('where conditions on inherited names match no call', () => {
    for (const name of INHERITED) {
      assert.equal(matchesAll({ plan: 'pro' }, [{ property: name, op: 'exists' }]), false, name)
      assert.equal(matchesAll({ plan: 'pro' }, [{ property: name, op: 'not_exists' }]), true, name)
      assert.equal(matchesAll({}, [{ property: `plan.${name}`, op: 'exists' }]), false, name)
    }
  })

  test('a computed trait reading an inherited name has no value', () => {
    const calls = [{ event: 'E', timestamp: NOW - 1_000, seq: 1, properties: { total: 3 } }]
    for (const name of INHERITED) {
      for (const kind of ['last', 'first', 'unique_list', 'most_frequent'] as const) {
        const value = computeTraitValue(
          { kind, event: 'E', property: name, where: [], withinDays: null },
          calls,
          NOW,
        )
        assert.ok(value === null || (Array.isArray(value) && value.length === 0), `${kind} ${name}: ${value}`)
      }
    }
  })

  test('audience trait and computed-trait conditions on inherited names hold for no profile', () => {
    for (const name of INHERITED) {
      const evaluator = new MembershipEvaluator(
        factsFromCalls([], { plan: 'pro' }, { ltv: 3 }),
        NOW,
        new Map(),
      )
      assert.equal(evaluator.holds({ trait: name, op: 'exists' }), false, name)
      assert.equal(evaluator.holds({ computedTrait: name, op: 'exists' }), false, name)
      assert.equal(evaluator.holds({ trait: `plan.${name}`, op: 'exists' }), false, name)
    }
  })

  test('identify traits with those names are kept as traits, and merged by time', () => {
    const traits = JSON.parse(
      '{"__proto__": {"admin": true}, "constructor": "c", "toString": 1, "plan": "pro"}',
    )
    const payload = { type: 'identify', userId: 'u1', timestamp: new Date(NOW).toISOString(), traits }
    const row = { pk: 1, source_id: 's', message_id: 'm1', type: 'identify', received_at: NOW, payload: '' }
    const planned = planBatch([{ row, payload }], { identities: [], identitiesOfProfiles: [], profiles: [] })
    const [profile] = planned.profiles
    const stored = JSON.parse(profile!.traits)
    assert.deepEqual(Object.keys(stored).sort(), ['__proto__', 'constructor', 'plan', 'toString'])
    assert.deepEqual(stored.constructor, 'c')
    assert.deepEqual(Object.keys(JSON.parse(profile!.trait_times)).sort(), Object.keys(stored).sort())

    // A later identify from an anonymous profile merged into this one: newer traits win, by name.
    const later = { type: 'identify', anonymousId: 'a1', timestamp: new Date(NOW + 1).toISOString() }
    const merged = planBatch(
      [
        { row: { ...row, pk: 2 }, payload: { ...later, traits: JSON.parse('{"constructor": "newer"}') } },
        { row: { ...row, pk: 3 }, payload: { type: 'track', event: 'E', userId: 'u1', anonymousId: 'a1' } },
      ],
      { identities: [], identitiesOfProfiles: [], profiles: [] },
    )
    assert.deepEqual(JSON.parse(merged.profiles[0]!.traits), { constructor: 'newer' })
  })
})
