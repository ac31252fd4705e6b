// Destination filters: in order, sampling decided by the messageId alone, field rules that copy rather
// than modify, and the mapping's save-time checks naming a JSON pointer.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DestinationFilter } from '../../src/domain/destinations.ts'
import { checkMapping, MappingError } from '../../src/lib/mapping-language.ts'
import { compileSubscription } from '../../src/lib/subscription-language.ts'
import { applyFilters, compileFilter, sampledIn } from '../../src/route/filters.ts'

const compile = (filters: DestinationFilter[]) =>
  filters.map((filter) => compileFilter(filter, compileSubscription))

describe('filters', () => {
  test('sample keeps about percent% of calls, and always the same ones', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `msg-${i}`)
    for (const percent of [0, 1, 25, 50, 99.5, 100]) {
      const kept = ids.filter((id) => sampledIn(id, percent)).length
      assert.ok(Math.abs(kept / ids.length - percent / 100) < 0.015, `${percent}%: kept ${kept}`)
      // Deterministic: asking again gives the same answer for every id.
      assert.equal(ids.filter((id) => sampledIn(id, percent)).length, kept)
    }
    // A bigger percentage keeps a superset: raising it never drops a call that was kept.
    assert.ok(ids.every((id) => !sampledIn(id, 25) || sampledIn(id, 50)))
  })

  test('rules apply in order, each to the calls its if matches; edits never touch the input', () => {
    const call = {
      type: 'track',
      event: 'Order Completed',
      messageId: 'm-1',
      timestamp: '2026-01-01T00:00:00.000Z',
      userId: 'u',
      properties: { email: 'a@b.c', total: 5, nested: { secret: 1, kept: 2 } },
      context: { ip: '10.0.0.1', locale: 'en' },
    }
    const frozen = structuredClone(call)
    const edited = applyFilters(
      call,
      compile([
        {
          action: 'dropFields',
          fields: ['properties.email', 'properties.nested.secret', 'context.ip', 'nope.x'],
        },
        { if: 'event = "Other"', action: 'drop' },
      ]),
    )
    assert.deepEqual(edited, {
      verdict: 'kept',
      call: { ...call, properties: { total: 5, nested: { kept: 2 } }, context: { locale: 'en' } },
    })
    assert.deepEqual(call, frozen)
    const allowed = applyFilters(
      call,
      compile([{ action: 'allowFields', fields: ['properties.total', 'userId'] }]),
    )
    assert.deepEqual(allowed, {
      verdict: 'kept',
      call: {
        type: 'track',
        messageId: 'm-1',
        timestamp: call.timestamp,
        properties: { total: 5 },
        userId: 'u',
      },
    })
    // A later rule sees the call as the earlier ones left it: the email is gone before the drop looks.
    const order = compile([
      { action: 'dropFields', fields: ['properties.email'] },
      { if: 'properties.email != null', action: 'drop' },
    ])
    assert.equal(applyFilters(call, order).verdict, 'kept')
    assert.equal(applyFilters(call, order.toReversed()).verdict, 'filtered')
    assert.equal(applyFilters(call, compile([{ action: 'sample', percent: 0 }])).verdict, 'sampledOut')
  })
})

describe('mapping checks', () => {
  test('errors name the JSON pointer inside the mapping', () => {
    const cases: [unknown, string, RegExp][] = [
      [{ a: { '@path': '$.x', '@template': 'y' } }, '/a', /one @-prefixed key/],
      [{ a: { b: [{ '@path': '$.x' }, { '@nope': 1 }] } }, '/a/b/1', /invalid directive: @nope/],
      [{ a: { '@path': 3 } }, '/a/@path', /string/],
      [{ list: [[{ deep: { '@what': 1 } }]] }, '/list/0/0/deep', /invalid directive: @what/],
      [[1, 2], '', /must be an object/],
      [{ big: 'x'.repeat(32 * 1024) }, '', /at most 32768/],
    ]
    for (const [mapping, pointer, message] of cases) {
      assert.throws(
        () => checkMapping(mapping),
        (error: unknown) => {
          assert.ok(error instanceof MappingError, JSON.stringify(mapping).slice(0, 60))
          assert.equal(error.pointer, pointer, error.message)
          assert.match(error.message, message)
          return true
        },
      )
    }
    checkMapping({ ok: { '@path': '$.event' }, list: [{ '@literal': 1 }], plain: { nested: true } })
  })
})
