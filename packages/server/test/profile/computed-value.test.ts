// Every computed trait kind against a brute-force reference, over random call sets (fast-check):
// random events, property values of mixed types, where filters and windows.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { COMPUTED_TRAIT_KINDS, snakeCase, type WhereCondition } from '../../src/domain/computed-traits.ts'
import {
  type CallFacts,
  computeTraitValue,
  type TraitDefinition,
  traitScope,
} from '../../src/profile/computed-value.ts'
import { addCalls, buildFold, foldedTraitValue, scopeKey, usableFor } from '../../src/profile/fold.ts'

const NOW = Date.UTC(2026, 5, 1)
const DAY = 86_400_000

const value = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom('a', 'b', 'c', 'ab'),
  fc.boolean(),
  fc.constant(null),
)
const call: fc.Arbitrary<Omit<CallFacts, 'seq'>> = fc.record({
  event: fc.constantFrom('Order', 'View', null),
  timestamp: fc.integer({ min: NOW - 40 * DAY, max: NOW }),
  properties: fc.dictionary(fc.constantFrom('total', 'plan', 'tag'), value, { maxKeys: 3 }),
})
const condition: fc.Arbitrary<WhereCondition> = fc.oneof(
  fc.record({
    property: fc.constantFrom('total', 'plan', 'tag'),
    op: fc.constantFrom('=', '!=', '<', '<=', '>', '>=', 'contains', 'starts_with', 'ends_with'),
    value: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', 'b')),
  }),
  fc.record({ property: fc.constantFrom('total', 'plan'), op: fc.constantFrom('exists', 'not_exists') }),
  fc.record({ property: fc.constant('plan'), op: fc.constant('in'), value: fc.constant(['a', 'c']) }),
) as fc.Arbitrary<WhereCondition>
const definition: fc.Arbitrary<TraitDefinition> = fc.record({
  kind: fc.constantFrom(...COMPUTED_TRAIT_KINDS),
  event: fc.constant('Order'),
  property: fc.constantFrom('total', 'plan', 'tag'),
  where: fc.array(condition, { maxLength: 2 }),
  withinDays: fc.option(fc.integer({ min: 1, max: 30 })),
})

/** The reference: every rule spelled out the slow, obvious way. */
function reference(def: TraitDefinition, calls: CallFacts[]): unknown {
  const kept: CallFacts[] = []
  for (const c of calls) {
    if (c.event !== def.event) continue
    if (def.withinDays !== null && !(c.timestamp > NOW - def.withinDays * DAY)) continue
    let ok = true
    for (const w of def.where) {
      const v = c.properties[w.property]
      const present = v !== undefined && v !== null
      let pass: boolean
      if (w.op === 'exists') pass = present
      else if (w.op === 'not_exists') pass = !present
      else if (w.op === '=') pass = v === w.value
      else if (w.op === '!=') pass = v !== w.value
      else if (w.op === 'in') pass = (w.value as unknown[]).includes(v)
      else if (w.op === 'contains')
        pass = typeof v === 'string' && typeof w.value === 'string' && v.indexOf(w.value) >= 0
      else if (w.op === 'starts_with')
        pass = typeof v === 'string' && typeof w.value === 'string' && v.slice(0, w.value.length) === w.value
      else if (w.op === 'ends_with')
        pass =
          typeof v === 'string' &&
          typeof w.value === 'string' &&
          w.value.length <= v.length &&
          v.slice(v.length - w.value.length) === w.value
      else {
        const sameType = typeof v === typeof w.value && (typeof v === 'number' || typeof v === 'string')
        const a = v as number
        const b = w.value as number
        pass = sameType && (w.op === '<' ? a < b : w.op === '<=' ? a <= b : w.op === '>' ? a > b : a >= b)
      }
      if (!pass) ok = false
    }
    if (ok) kept.push(c)
  }
  if (def.kind === 'count') return kept.length
  const vals = kept.map((c) => c.properties[def.property!]).filter((v) => v !== undefined && v !== null)
  const nums = vals.filter((v) => typeof v === 'number') as number[]
  if (def.kind === 'sum') return nums.reduce((s, n) => s + n, 0)
  if (def.kind === 'avg') return nums.length ? nums.reduce((s, n) => s + n, 0) / nums.length : null
  if (def.kind === 'min') return nums.length ? Math.min(...nums) : null
  if (def.kind === 'max') return nums.length ? Math.max(...nums) : null
  if (def.kind === 'first' || def.kind === 'last') {
    let best: CallFacts | null = null
    for (const c of kept) {
      const v = c.properties[def.property!]
      if (v === undefined || v === null) continue
      const earlier =
        best === null || c.timestamp < best.timestamp || (c.timestamp === best.timestamp && c.seq < best.seq)
      const later =
        best === null || c.timestamp > best.timestamp || (c.timestamp === best.timestamp && c.seq > best.seq)
      if (def.kind === 'first' ? earlier : later) best = c
    }
    return best === null ? null : best.properties[def.property!]
  }
  // Distinct values in the documented order: numbers, strings, false, true.
  const order = (v: unknown) =>
    typeof v === 'number' ? [0, v] : typeof v === 'string' ? [1, v] : [2, v ? 1 : 0]
  const distinct: unknown[] = []
  for (const v of vals) if (!distinct.includes(v)) distinct.push(v)
  distinct.sort((x, y) => {
    const [rx, kx] = order(x) as [number, number | string]
    const [ry, ky] = order(y) as [number, number | string]
    return rx !== ry ? rx - ry : kx < ky ? -1 : kx > ky ? 1 : 0
  })
  if (def.kind === 'unique_list') return distinct
  if (def.kind === 'unique_list_count') return distinct.length
  let winner: unknown = null
  let winnerCount = 1
  for (const v of distinct) {
    const n = vals.filter((other) => other === v).length
    if (n > winnerCount) {
      winner = v
      winnerCount = n
    }
  }
  return winner
}

/**
 * The trait's value from a fold built from the first chunk and brought up to date with the others, one
 * at a time (checking before each that the fold is still usable, when asked).
 */
function foldedInChunks(def: TraitDefinition, chunks: CallFacts[][], checkUsable = false): unknown {
  const scope = traitScope(def)
  const key = scopeKey(scope)
  const scopes = new Map([[key, scope]])
  const [head = [], ...rest] = chunks
  const fold = buildFold(scopes, head, NOW)
  for (const chunk of rest) {
    if (checkUsable) assert.ok(usableFor(fold, scopes, NOW))
    addCalls(fold, scopes, chunk, NOW)
  }
  return foldedTraitValue(fold, def, key)
}

/** The value over every call at once, as evaluation without a fold gives it. */
function wholeValue(def: TraitDefinition, calls: CallFacts[]): unknown {
  return calls.some((c) => c.event === def.event) ? computeTraitValue(def, calls, NOW) : null
}

describe('computed trait values', () => {
  test('every kind, filter and window agrees with the brute-force reference', () => {
    fc.assert(
      fc.property(definition, fc.array(call, { maxLength: 30 }), (def, raw) => {
        const calls = raw.map((c, seq) => ({ ...c, seq }))
        assert.deepEqual(computeTraitValue(def, calls, NOW), reference(def, calls))
      }),
      { numRuns: 3_000 },
    )
  })

  test('a fold built from some calls and brought up to date with the rest gives the same values', () => {
    // Evaluation keeps folds per profile and adds only newer calls; the value must be exactly the one
    // computed over the whole history, however the calls were split between steps.
    fc.assert(
      fc.property(
        definition,
        fc.array(call, { maxLength: 40 }),
        fc.array(fc.nat(40), { maxLength: 4 }),
        (def, raw, cuts) => {
          const calls = raw.map((c, seq) => ({ ...c, seq: seq + 1 }))
          assert.deepEqual(foldedInChunks(def, splitAt(calls, cuts), true), wholeValue(def, calls))
        },
      ),
      { numRuns: 2_000 },
    )
  })

  test('chunks folded in any order give the same values (integers: even sums agree)', () => {
    // Calls are folded in the order they were consumed, but no kind may depend on that beyond the
    // rounding of sums: first/last break ties by (timestamp, arrival), not by when they were folded.
    fc.assert(
      fc.property(
        definition,
        fc.array(call, { maxLength: 40 }),
        fc.array(fc.nat(40), { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (def, raw, cuts, shuffle) => {
          const calls = raw.map((c, seq) => ({ ...c, seq: seq + 1 }))
          const chunks = splitAt(calls, cuts)
          // A permutation of the chunks chosen by `shuffle` (swap i with shuffle[i] mod length).
          shuffle.forEach((pick, i) => {
            const j = pick % chunks.length
            if (i < chunks.length) [chunks[i], chunks[j]] = [chunks[j]!, chunks[i]!]
          })
          assert.deepEqual(foldedInChunks(def, chunks), wholeValue(def, calls))
        },
      ),
      { numRuns: 2_000 },
    )
  })

  test('sums and averages of fractions folded step by step in arrival order equal the reference', () => {
    const fraction = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })
    const orders = fc.array(
      fc.record({
        timestamp: fc.integer({ min: NOW - 40 * DAY, max: NOW }),
        total: fc.option(fraction, { nil: undefined }),
      }),
      { maxLength: 40 },
    )
    fc.assert(
      fc.property(
        fc.constantFrom('sum' as const, 'avg' as const),
        fc.option(fc.integer({ min: 1, max: 30 })),
        orders,
        fc.array(fc.nat(40), { maxLength: 4 }),
        (kind, withinDays, raw, cuts) => {
          const def: TraitDefinition = { kind, event: 'Order', property: 'total', where: [], withinDays }
          const calls = raw.map(({ timestamp, total }, seq) => ({
            seq: seq + 1,
            event: 'Order',
            timestamp,
            properties: total === undefined ? {} : { total },
          }))
          const whole = calls.length === 0 ? null : reference(def, calls)
          assert.deepEqual(foldedInChunks(def, splitAt(calls, cuts)), whole)
        },
      ),
      { numRuns: 2_000 },
    )
  })

  test('a windowed fold is not usable once one of its calls has left the window', () => {
    const def = { event: 'E', where: [], withinDays: 1, property: 'p' }
    const scopes = new Map([[scopeKey(def), def]])
    const fold = buildFold(
      scopes,
      [{ seq: 1, event: 'E', timestamp: NOW - 86_400_000 + 1_000, properties: { p: 1 } }],
      NOW,
    )
    assert.equal(fold.aggregates.get(scopeKey(def))!.count, 1)
    assert.ok(usableFor(fold, scopes, NOW + 999))
    assert.equal(usableFor(fold, scopes, NOW + 1_000), false)
    // A scope it does not have makes it unusable too: that one must be built from the history.
    const other = { ...def, property: 'q' }
    assert.equal(usableFor(fold, new Map([[scopeKey(other), other]]), NOW), false)
  })

  test('most_frequent needs a value seen twice; ties go to the first in sort order', () => {
    const def: TraitDefinition = {
      kind: 'most_frequent',
      event: 'E',
      property: 'p',
      where: [],
      withinDays: null,
    }
    const calls = (values: unknown[]) =>
      values.map((p, seq) => ({ seq, event: 'E', timestamp: NOW, properties: { p } }))
    assert.equal(computeTraitValue(def, calls(['x', 'y']), NOW), null)
    assert.equal(computeTraitValue(def, calls(['y', 'x', 'y', 'x']), NOW), 'x')
    assert.equal(computeTraitValue(def, calls(['y', 'x', 'y']), NOW), 'y')
  })

  test('keys are snake_cased names', () => {
    assert.equal(snakeCase('Orders Last 30 Days'), 'orders_last_30_days')
    assert.equal(snakeCase('Big Spenders!'), 'big_spenders')
    assert.equal(snakeCase('  lifetimeValue (EUR) '), 'lifetime_value_eur')
    assert.equal(snakeCase('Café Visits'), 'cafe_visits')
  })
})

/** `items` cut at the given positions (clamped, deduplicated) into consecutive non-empty chunks. */
function splitAt<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const edges = [...new Set([0, ...cuts.map((n) => Math.min(n, items.length)), items.length])].sort(
    (a, b) => a - b,
  )
  const chunks: T[][] = []
  for (let i = 0; i + 1 < edges.length; i++) chunks.push(items.slice(edges[i], edges[i + 1]))
  return chunks
}
