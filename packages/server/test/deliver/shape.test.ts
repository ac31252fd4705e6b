import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import {
  isCanonicalIso,
  isoTimestamp,
  serializeMessage,
  shapeDelete,
  shapeMessage,
} from '../../src/deliver/shape.ts'

/** Byte-for-byte: the serialized body must equal the hand-written expected object, member order included. */
function assertBody(payload: Record<string, unknown>, expected: Record<string, unknown>): void {
  const shaped = shapeMessage(payload)
  assert.equal(JSON.stringify(shaped), JSON.stringify(expected))
  assert.deepEqual(serializeMessage(shaped), Buffer.from(JSON.stringify(expected), 'utf8'))
}

const context = {
  ip: '203.0.113.9',
  library: { name: 'analytics-node', version: '2.0.0' },
  page: {
    path: '/pricing',
    referrer: 'https://google.com/',
    title: 'Pricing',
    url: 'https://example.com/pricing?x=1',
  },
}

/** What the Tracking API stores: an enriched Segment message, with members the shape does not carry. */
function stored(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    messageId: 'msg-1',
    context,
    integrations: { All: true, Webhooks: true },
    timestamp: '2026-01-31T12:00:00.123Z',
    originalTimestamp: '2026-01-31T11:59:58.000Z',
    sentAt: '2026-01-31T11:59:59.000Z',
    receivedAt: '2026-01-31T12:00:01.123Z',
    ...fields,
  }
}

describe('shapeMessage: each type byte for byte', () => {
  test('track', () => {
    assertBody(
      stored({
        type: 'track',
        userId: 'u1',
        event: 'Order Completed',
        properties: { total: 12.5, currency: 'EUR' },
      }),
      {
        version: 1,
        type: 'track',
        userId: 'u1',
        event: 'Order Completed',
        properties: { total: 12.5, currency: 'EUR' },
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      },
    )
  })

  test('identify', () => {
    assertBody(
      stored({ type: 'identify', userId: 'u1', anonymousId: 'anon-1', traits: { email: 'a@b.co', age: 41 } }),
      {
        version: 1,
        type: 'identify',
        userId: 'u1',
        anonymousId: 'anon-1',
        traits: { email: 'a@b.co', age: 41 },
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      },
    )
  })

  test('page with its own properties, name and category', () => {
    assertBody(
      stored({
        type: 'page',
        userId: 'u1',
        name: 'Pricing',
        category: 'Marketing',
        properties: {
          plan: 'pro',
          url: 'https://example.com/own',
          path: '/own',
          title: 'Own',
          referrer: 'r',
        },
      }),
      {
        version: 1,
        type: 'page',
        userId: 'u1',
        name: 'Pricing',
        category: 'Marketing',
        properties: {
          path: '/own',
          referrer: 'r',
          title: 'Own',
          url: 'https://example.com/own',
          plan: 'pro',
        },
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      },
    )
  })

  test('screen carries name and the device, os and app context', () => {
    const mobile = {
      device: { model: 'iPhone15,2', type: 'ios', id: 'dev-1' },
      os: { name: 'iOS', version: '17.2' },
      app: { build: '42', name: 'Shop', version: '3.1.0', namespace: 'com.example.shop' },
      ip: '198.51.100.7',
    }
    assertBody(stored({ type: 'screen', userId: 'u1', name: 'Checkout', context: mobile }), {
      version: 1,
      type: 'screen',
      userId: 'u1',
      name: 'Checkout',
      context: mobile,
      messageId: 'msg-1',
      timestamp: '2026-01-31T12:00:00.123Z',
    })
  })

  test('screen keeps its category and properties when the call has them', () => {
    assertBody(
      stored({
        type: 'screen',
        anonymousId: 'anon-2',
        name: 'Cart',
        category: 'Shop',
        properties: { items: 3 },
      }),
      {
        version: 1,
        type: 'screen',
        userId: null,
        anonymousId: 'anon-2',
        name: 'Cart',
        category: 'Shop',
        properties: { items: 3 },
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      },
    )
  })

  test('alias has "Previous ID" and "User ID" and no userId member', () => {
    const shaped = shapeMessage(stored({ type: 'alias', previousId: 'anon-9', userId: 'u9' }))
    assert.equal(
      JSON.stringify(shaped),
      JSON.stringify({
        version: 1,
        type: 'alias',
        'Previous ID': 'anon-9',
        'User ID': 'u9',
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      }),
    )
    assert.equal(Object.hasOwn(shaped, 'userId'), false)
    assert.match(serializeMessage(shaped).toString(), /"Previous ID":"anon-9","User ID":"u9"/)
  })

  test('alias with an anonymousId carries it', () => {
    assertBody(stored({ type: 'alias', previousId: 'p', userId: 'u', anonymousId: 'a' }), {
      version: 1,
      type: 'alias',
      'Previous ID': 'p',
      'User ID': 'u',
      anonymousId: 'a',
      context,
      messageId: 'msg-1',
      timestamp: '2026-01-31T12:00:00.123Z',
    })
  })

  test('group', () => {
    assertBody(
      stored({ type: 'group', userId: 'u1', groupId: 'g1', traits: { name: 'Initech', employees: 300 } }),
      {
        version: 1,
        type: 'group',
        userId: 'u1',
        groupId: 'g1',
        traits: { name: 'Initech', employees: 300 },
        context,
        messageId: 'msg-1',
        timestamp: '2026-01-31T12:00:00.123Z',
      },
    )
  })

  test('delete: only type, userId and timestamp, no version', () => {
    const shaped = shapeDelete({ userId: 'u1', timestamp: Date.UTC(2026, 0, 31, 12) })
    assert.equal(
      JSON.stringify(shaped),
      '{"type":"delete","userId":"u1","timestamp":"2026-01-31T12:00:00.000Z"}',
    )
    assert.deepEqual(Object.keys(shapeDelete({ userId: 'u', timestamp: '2026-01-31T12:00:00Z' })), [
      'type',
      'userId',
      'timestamp',
    ])
  })
})

describe('shapeMessage: delete notifications', () => {
  test('a stored delete is shaped by the same entry point: type, userId and timestamp only, byte for byte', () => {
    const payload = { type: 'delete', userId: 'u-42', timestamp: '2026-01-31T12:00:00.123Z' }
    const expected = '{"type":"delete","userId":"u-42","timestamp":"2026-01-31T12:00:00.123Z"}'
    assert.deepEqual(serializeMessage(shapeMessage(payload)), Buffer.from(expected, 'utf8'))
    assert.deepEqual(shapeMessage(payload), shapeDelete(payload))
  })

  test('anything else in the stored payload is not delivered; the timestamp is normalized', () => {
    const shaped = shapeMessage({
      ...stored({ type: 'delete', userId: 'jürgen 🎉' }),
      anonymousId: 'anon-1',
      version: 2,
      timestamp: 1_769_860_800_000,
    })
    assert.equal(
      serializeMessage(shaped).toString('utf8'),
      '{"type":"delete","userId":"jürgen 🎉","timestamp":"2026-01-31T12:00:00.000Z"}',
    )
  })

  test('a delete without a usable userId or timestamp is refused clearly', () => {
    const at = '2026-01-31T12:00:00.000Z'
    assert.throws(
      () => shapeMessage({ type: 'delete', timestamp: at }),
      /delete message needs a string "userId"/,
    )
    assert.throws(() => shapeMessage({ type: 'delete', userId: 42, timestamp: at }), /string "userId"/)
    assert.throws(
      () => shapeMessage({ type: 'delete', userId: '', timestamp: at }),
      /delete message needs a non-empty string "userId"/,
    )
    assert.throws(() => shapeMessage({ type: 'delete', userId: 'u' }), /delete message needs a "timestamp"/)
    assert.throws(
      () => shapeMessage({ type: 'delete', userId: 'u', timestamp: { at } }),
      /delete message needs a "timestamp"/,
    )
    assert.throws(
      () => shapeMessage({ type: 'delete', userId: 'u', timestamp: 'last Tuesday' }),
      /Not a valid timestamp: "last Tuesday"/,
    )
  })
})

describe('shapeMessage: page properties fall back to context.page', () => {
  test('all four from context.page when the call has none; other properties follow', () => {
    assertBody(stored({ type: 'page', userId: 'u1', properties: { plan: 'pro' } }), {
      version: 1,
      type: 'page',
      userId: 'u1',
      properties: {
        path: '/pricing',
        referrer: 'https://google.com/',
        title: 'Pricing',
        url: 'https://example.com/pricing?x=1',
        plan: 'pro',
      },
      context,
      messageId: 'msg-1',
      timestamp: '2026-01-31T12:00:00.123Z',
    })
  })

  test('member by member: the call wins where it gives a string, context.page fills the rest', () => {
    const shaped = shapeMessage(
      stored({ type: 'page', userId: 'u1', properties: { title: 'Mine', url: 42 } }),
    )
    assert.deepEqual((shaped as { properties: unknown }).properties, {
      path: '/pricing',
      referrer: 'https://google.com/',
      title: 'Mine',
      url: 'https://example.com/pricing?x=1',
    })
  })

  test('without properties or context.page, nothing is invented', () => {
    assertBody(stored({ type: 'page', userId: 'u1', context: { ip: '1.2.3.4' } }), {
      version: 1,
      type: 'page',
      userId: 'u1',
      properties: {},
      context: { ip: '1.2.3.4' },
      messageId: 'msg-1',
      timestamp: '2026-01-31T12:00:00.123Z',
    })
  })

  test('a non-string value with no string fallback is kept as the call sent it', () => {
    const shaped = shapeMessage(
      stored({ type: 'page', userId: 'u1', context: {}, properties: { path: null } }),
    )
    assert.equal(JSON.stringify((shaped as { properties: unknown }).properties), '{"path":null}')
  })
})

describe('shapeMessage: defaults and what is not forwarded', () => {
  test('integrations, receivedAt, originalTimestamp, sentAt and unknown members are not delivered', () => {
    const body = serializeMessage(
      shapeMessage(stored({ type: 'track', userId: 'u', event: 'E', custom: 1, traits: { a: 1 } })),
    ).toString()
    for (const member of ['integrations', 'receivedAt', 'originalTimestamp', 'sentAt', 'custom', 'traits']) {
      assert.equal(body.includes(`"${member}"`), false, member)
    }
  })

  test('anonymous calls: userId null, anonymousId carried; missing objects become {}', () => {
    assertBody(
      {
        type: 'track',
        anonymousId: 'anon',
        event: 'Viewed',
        messageId: 'm',
        timestamp: '2026-01-31T12:00:00.000Z',
      },
      {
        version: 1,
        type: 'track',
        userId: null,
        anonymousId: 'anon',
        event: 'Viewed',
        properties: {},
        context: {},
        messageId: 'm',
        timestamp: '2026-01-31T12:00:00.000Z',
      },
    )
    const identify = shapeMessage({
      type: 'identify',
      userId: 'u',
      messageId: 'm',
      timestamp: '2026-01-31T12:00:00Z',
    })
    assert.deepEqual((identify as { traits: unknown }).traits, {})
  })

  test('a message missing what its type needs, or of an unknown type, is refused clearly', () => {
    assert.throws(
      () => shapeMessage(stored({ type: 'track', userId: 'u' })),
      /track message needs a string "event"/,
    )
    assert.throws(() => shapeMessage(stored({ type: 'group', userId: 'u' })), /"groupId"/)
    assert.throws(() => shapeMessage(stored({ type: 'alias', userId: 'u' })), /"previousId"/)
    assert.throws(() => shapeMessage(stored({ type: 'bogus', userId: 'u' })), /type "bogus"/)
  })
})

describe('timestamps: ISO 8601 UTC with milliseconds', () => {
  const cases: Array<[string | number, string]> = [
    ['2026-01-31T12:00:00Z', '2026-01-31T12:00:00.000Z'],
    ['2026-01-31T12:00:00.5Z', '2026-01-31T12:00:00.500Z'],
    ['2026-01-31T14:00:00.250+02:00', '2026-01-31T12:00:00.250Z'],
    ['2026-01-31T07:00:00-05:00', '2026-01-31T12:00:00.000Z'],
    [Date.UTC(2026, 0, 31, 12, 0, 0, 7), '2026-01-31T12:00:00.007Z'],
    ['2001-02-03T04:05:06.789123Z', '2001-02-03T04:05:06.789Z'],
  ]
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} -> ${expected}`, () => {
      const shaped = shapeMessage({ type: 'identify', userId: 'u', messageId: 'm', timestamp: input })
      assert.equal((shaped as { timestamp: string }).timestamp, expected)
      assert.equal(isoTimestamp(input), expected)
    })
  }

  test('an unreadable timestamp falls back to receivedAt; neither readable throws', () => {
    const shaped = shapeMessage({
      type: 'identify',
      userId: 'u',
      messageId: 'm',
      timestamp: 'yesterday-ish',
      receivedAt: '2026-01-31T12:00:01Z',
    })
    assert.equal((shaped as { timestamp: string }).timestamp, '2026-01-31T12:00:01.000Z')
    assert.throws(() => shapeMessage({ type: 'identify', userId: 'u', messageId: 'm' }), /no valid timestamp/)
    assert.throws(() => shapeDelete({ userId: 'u', timestamp: 'nope' }), /Not a valid timestamp/)
  })
})

describe('timestamps already in the delivered form are passed through unchanged', () => {
  /** What delivery did before the fast path, for every timestamp: a Date round trip. */
  const viaDate = (text: string) => {
    const date = new Date(text)
    return Number.isNaN(date.getTime()) ? null : date.toISOString()
  }

  test('exactly the texts a Date round trip leaves unchanged are recognized (any digits in the pattern)', () => {
    const digits = (count: number) => fc.stringMatching(new RegExp(`^[0-9]{${count}}$`))
    fc.assert(
      fc.property(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3), (...parts) => {
        const [year, month, day, hour, minute, second, ms] = parts
        const text = `${year}-${month}-${day}T${hour}:${minute}:${second}.${ms}Z`
        assert.equal(isCanonicalIso(text), viaDate(text) === text, text)
      }),
      { numRuns: 20_000 },
    )
  })

  test('every toISOString of years 0000-9999 is recognized', () => {
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
    fc.assert(
      fc.property(fc.integer({ min: -62167219200000, max }), (ms) => {
        assert.equal(isCanonicalIso(new Date(ms).toISOString()), true)
      }),
      { numRuns: 20_000 },
    )
  })

  test('calendar edges, and what is not the delivered form', () => {
    for (const text of ['2024-02-29T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '0000-01-01T00:00:00.000Z']) {
      assert.equal(isCanonicalIso(text), true, text)
    }
    for (const text of [
      '2023-02-29T00:00:00.000Z', // Date rolls it to March 1st
      '1900-02-29T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-01-31T24:00:00.000Z', // end of day: the next day's 00:00
      '2026-01-31T23:59:60.000Z',
      '2026-01-31T12:00:00Z',
      '2026-01-31T12:00:00.000+00:00',
      '2026-01-31T12:00:00.000z',
      '+012026-01-31T12:00:00.000Z',
    ]) {
      assert.equal(isCanonicalIso(text), false, text)
    }
  })
})

describe('serializeMessage: exact UTF-8 bytes', () => {
  test('non-ASCII and emoji are sent as raw UTF-8, not escaped', () => {
    const shaped = shapeMessage(
      stored({
        type: 'track',
        userId: 'jürgen',
        event: 'Café ☕ bought',
        properties: { note: '日本語 🎉👩‍👩‍👧' },
      }),
    )
    const body = serializeMessage(shaped)
    const expected =
      '{"version":1,"type":"track","userId":"jürgen","event":"Café ☕ bought","properties":{"note":"日本語 🎉👩‍👩‍👧"},' +
      `"context":${JSON.stringify(context)},"messageId":"msg-1","timestamp":"2026-01-31T12:00:00.123Z"}`
    assert.deepEqual(body, Buffer.from(expected, 'utf8'))
    // 🎉 is F0 9F 8E 89 in UTF-8.
    assert.ok(body.includes(Buffer.from([0xf0, 0x9f, 0x8e, 0x89])))
    assert.deepEqual(JSON.parse(body.toString('utf8')), shaped)
  })

  test('a lone surrogate is escaped, so the body is still valid UTF-8', () => {
    const body = serializeMessage(
      shapeMessage(stored({ type: 'track', userId: 'u', event: 'bad \ud800 half' })),
    )
    assert.ok(body.toString('utf8').includes('"bad \\ud800 half"'))
    assert.equal(Buffer.from(body.toString('utf8'), 'utf8').equals(body), true)
  })
})
