// The subscription syntax: what Segment's parser reads as written is accepted and evaluated exactly as
// Segment's own `validate` does; what it would silently misread is refused with the position.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseFql, validate } from '@segment/destination-subscriptions'
import {
  checkSubscription,
  compileSubscription,
  parseSubscription,
  SubscriptionSyntaxError,
} from '../../src/lib/subscription-language.ts'
import { JsonFacts, prefilterOf } from '../../src/route/subscription-prefilter.ts'
import { generatedCalls, generatedSubscriptions } from '../helpers/generated-calls.ts'

describe('subscriptions', () => {
  test('the examples of the documentation are accepted and select what they say', () => {
    const order = { type: 'track', event: 'Order Completed', properties: { total: 150 }, userId: 'u' }
    const cases: [string, Record<string, unknown>, boolean][] = [
      ['type = "track" and (event = "Order Completed" or event = "Product Added")', order, true],
      ['properties.total >= 100', order, true],
      ['properties.total >= 200', order, false],
      ['contains(event, "Nike")', order, false],
      ['match(event, "Order*")', order, true],
      ['userId != null', order, true],
      ['userId != null', { type: 'track', event: 'x', anonymousId: 'a' }, false],
      ['type = "identify" and traits.plan = "pro"', { type: 'identify', traits: { plan: 'pro' } }, true],
      ['type = "delete"', { type: 'delete', userId: 'u', timestamp: '2026-01-01T00:00:00.000Z' }, true],
    ]
    for (const [text, call, expected] of cases) {
      assert.equal(compileSubscription(text)(call), expected, text)
    }
  })

  test('differential: generated subscriptions over generated calls decide as @segment/destination-subscriptions', () => {
    const calls = generatedCalls(200, 11)
    let matches = 0
    let total = 0
    for (const text of generatedSubscriptions(300, 7)) {
      checkSubscription(text)
      const ast = parseFql(text)
      assert.ok(!('error' in ast), `Segment's parser refuses what Sluice accepted: ${text}`)
      const ours = compileSubscription(text)
      for (const call of calls) {
        const expected = validate(ast, call)
        assert.equal(ours(call), expected, `${text} on ${JSON.stringify(call)}`)
        total++
        if (expected) matches++
      }
    }
    // Not a degenerate sample: both outcomes occur often.
    assert.ok(matches > total * 0.1 && matches < total * 0.9, `${matches} of ${total} matched`)
  })

  test("the JSON prefilter only ever rules out calls Segment's validate would not match", () => {
    // Quotes, backslashes and escapes in values, and an `event` nested below the top level too.
    const tricky = [
      { type: 'track', event: 'Say "hi"\\', properties: { event: 'Order Completed' } },
      { type: 'track', event: 'Order Completed', properties: { note: 'x\\"event\\":\\"y' } },
      { type: 'track', event: 'caf\u00e9 \u2713', userId: 'u' },
    ]
    const calls = [...generatedCalls(200, 5), ...tricky].map((call) => ({ call, json: JSON.stringify(call) }))
    let ruledOut = 0
    for (const text of generatedSubscriptions(300, 9)) {
      const prefilter = prefilterOf(parseSubscription(text))
      if (prefilter === null) continue
      const ast = parseFql(text)
      assert.ok(!('error' in ast))
      for (const { call, json } of calls) {
        if (prefilter(new JsonFacts(json))) continue
        ruledOut++
        assert.equal(validate(ast, call), false, `${text} ruled out ${json}`)
      }
    }
    assert.ok(ruledOut > 1_000, `only ${ruledOut} calls ruled out`)
    // Only exact top-level comparisons rule calls out; anything else is left to validate.
    const of = (text: string) => prefilterOf(parseSubscription(text))
    assert.equal(of('properties.total > 3'), null)
    assert.equal(of('event = "A" or properties.x = "B"'), null)
    const prefilter = of('type = "track" and properties.x = "B"')!
    assert.equal(prefilter(new JsonFacts('{"type":"page"}')), false)
    assert.equal(prefilter(new JsonFacts('{"type":"track"}')), true)
    // Values are compared decoded (a subscription cannot quote a quote or a backslash).
    for (const { call, json } of calls.slice(-2)) {
      assert.equal(of(`event = ${JSON.stringify(call.event)}`)!(new JsonFacts(json)), true, json)
    }
  })

  test("input Segment's parser would misread is refused, naming the position", () => {
    const cases: [string, number, RegExp][] = [
      ['type = ', 7, /expected a value/],
      ['properties.total >= ', 20, /expected a value/],
      ['type = "track" and (', 20, /expected a field/],
      ['event = "a" or', 14, /expected a field/],
      ['event = "a" and event = "b" or type = "track"', 28, /mixed/],
      ['((event = "a") and type = "track")', 1, /nested/],
      ['event in ["a", "b"]', 6, /expected one of/],
      ['foo = "x"', 0, /expected a field/],
      ['properties = "x"', 0, /needs a member/],
      ['match(event, "Order")', 13, /starts or ends with \*/],
      ['type == "track"', 6, /expected a value/],
      ['', 0, /empty/],
      ['type = "tr', 10, /unterminated/],
      ['type = "track")', 14, /closes no/],
    ]
    for (const [text, position, message] of cases) {
      assert.throws(
        () => checkSubscription(text),
        (error: unknown) => {
          assert.ok(error instanceof SubscriptionSyntaxError, text)
          assert.equal(error.position, position, `${text}: ${error.message}`)
          assert.match(error.message, message, text)
          return true
        },
      )
    }
  })
})
