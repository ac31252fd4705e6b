import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Analytics, ClosedError, LIBRARY, ValidationError } from '../src/index.ts'
import { startServer, type TestServer } from './helpers/server.ts'

/** Asserts `fn` throws a ValidationError on `field` whose message mentions `words`. */
function throwsOn(fn: () => unknown, field: string, words: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ValidationError, `expected a ValidationError, got ${String(error)}`)
    assert.equal(error.field, field)
    assert.match(error.message, words)
    return true
  })
}

describe('validation at the call', () => {
  let server: TestServer
  let analytics: Analytics
  before(async () => {
    server = await startServer()
    analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, flushAt: 1 })
  })
  after(async () => {
    await analytics.close()
    await server.close()
  })

  // Calls typed as a JavaScript caller would make them: the checks are for runtime values.
  const loose = () => analytics as unknown as Record<string, (params: unknown) => string>

  test('every call needs userId or anonymousId', () => {
    for (const call of ['identify', 'track', 'page', 'screen', 'group']) {
      throwsOn(
        () => loose()[call]!({ event: 'E', groupId: 'g' }),
        '.userId',
        new RegExp(`${call}\\(\\) needs \\.userId or \\.anonymousId`),
      )
    }
    throwsOn(
      () => analytics.track({ userId: '', event: 'E' }),
      '.userId',
      /must be a non-empty string when given; got an empty string/,
    )
    throwsOn(() => loose().track!({ anonymousId: 42, event: 'E' }), '.anonymousId', /number 42/)
    assert.doesNotThrow(() => analytics.track({ anonymousId: 'a1', event: 'E' }))
  })

  test('track needs event, group needs groupId, alias needs previousId and userId', () => {
    throwsOn(() => loose().track!({ userId: 'u1' }), '.event', /track\(\) needs \.event, the event name/)
    throwsOn(() => analytics.track({ userId: 'u1', event: '' }), '.event', /an empty string/)
    throwsOn(() => analytics.track({ userId: 'u1', event: ' \t' }), '.event', /must not be blank; got " \\t"/)
    throwsOn(() => loose().group!({ userId: 'u1' }), '.groupId', /group\(\) needs \.groupId/)
    throwsOn(() => loose().alias!({ userId: 'u1' }), '.previousId', /alias\(\) needs \.previousId/)
    throwsOn(() => loose().alias!({ previousId: 'p1' }), '.userId', /alias\(\) needs \.userId/)
  })

  test('objects must be objects, strings strings, timestamps dates', () => {
    throwsOn(() => loose().track!(undefined), '.', /track\(\) needs an object argument/)
    throwsOn(() => loose().track!({ userId: 'u1', event: 'E', properties: [1] }), '.properties', /an array/)
    throwsOn(() => loose().identify!({ userId: 'u1', traits: 'pro' }), '.traits', /a string/)
    throwsOn(() => loose().track!({ userId: 'u1', event: 'E', context: null }), '.context', /null/)
    throwsOn(
      () => loose().track!({ userId: 'u1', event: 'E', integrations: true }),
      '.integrations',
      /boolean true/,
    )
    throwsOn(
      () => analytics.track({ userId: 'u1', event: 'E', timestamp: 'yesterday' }),
      '.timestamp',
      /valid Date or ISO 8601/,
    )
    throwsOn(
      () => analytics.track({ userId: 'u1', event: 'E', timestamp: new Date(Number.NaN) }),
      '.timestamp',
      /valid Date/,
    )
    throwsOn(
      () => analytics.page({ userId: 'u1', url: '' }),
      '.url',
      /page\(\) \.url must be a non-empty string/,
    )
    throwsOn(
      () => analytics.track({ userId: 'u1', event: 'E', messageId: '' }),
      '.messageId',
      /non-empty string/,
    )
  })

  test('a member that cannot be serialized is refused at the call, naming it', () => {
    const circular: Record<string, unknown> = {}
    circular.self = circular
    throwsOn(
      () => analytics.track({ userId: 'u1', event: 'E', properties: circular }),
      '.properties',
      /track\(\) \.properties cannot be serialized as JSON: .*circular/i,
    )
    throwsOn(() => analytics.identify({ userId: 'u1', traits: { n: 10n } }), '.traits', /BigInt/)
    throwsOn(() => analytics.page({ userId: 'u1', context: { big: 1n } }), '.context', /cannot be serialized/)
  })

  test('32 KB per message (default maxMessageBytes): at the limit passes, one byte over throws', async () => {
    assert.equal(analytics.settings.maxMessageBytes, 32_768)
    const base = { userId: 'u1', event: 'E', messageId: 'fixed-id', timestamp: '2026-01-31T12:00:00.000Z' }
    const sizeWith = (filler: string) =>
      Buffer.byteLength(
        JSON.stringify({
          type: 'track',
          messageId: 'fixed-id',
          timestamp: base.timestamp,
          userId: 'u1',
          event: 'E',
          properties: { filler },
          context: { library: LIBRARY },
        }),
      )
    const fits = 'x'.repeat(32_768 - sizeWith(''))
    assert.equal(sizeWith(fits), 32_768)
    analytics.track({ ...base, properties: { filler: fits } })
    await analytics.flush()
    const sent = server.messages().find((message) => message.messageId === 'fixed-id')
    assert.equal(Buffer.byteLength(JSON.stringify(sent)), 32_768)
    throwsOn(
      () => analytics.track({ ...base, properties: { filler: `${fits}y` } }),
      '.',
      /track\(\) message is 32769 bytes serialized; the limit is 32768/,
    )
    // Counted exactly in UTF-8 bytes with multi-byte text in every member the caller writes.
    const wide = {
      ...base,
      messageId: 'id-é',
      userId: 'ü-1',
      event: 'Café ✓ 🎉',
      context: { locale: 'fr-ç' },
    }
    const wideSize = (filler: string) =>
      Buffer.byteLength(
        JSON.stringify({
          type: 'track',
          messageId: wide.messageId,
          timestamp: base.timestamp,
          userId: wide.userId,
          event: wide.event,
          properties: { filler },
          context: { ...wide.context, library: LIBRARY },
        }),
      )
    // 2-byte characters, then 1-byte ones to land exactly on the limit.
    const twoByte = 'é'.repeat(Math.floor((32_768 - wideSize('')) / 2) - 1)
    const wideFits = twoByte + 'x'.repeat(32_768 - wideSize(twoByte))
    assert.equal(wideSize(wideFits), 32_768)
    analytics.track({ ...wide, properties: { filler: wideFits } })
    throwsOn(
      () => analytics.track({ ...wide, properties: { filler: `${wideFits}x` } }),
      '.',
      /track\(\) message is 32769 bytes serialized; the limit is 32768/,
    )
    throwsOn(
      () => analytics.track({ ...wide, properties: { filler: `${wideFits.slice(1)}🎉` } }),
      '.',
      /track\(\) message is 32770 bytes serialized; the limit is 32768/,
    )
    // Multi-byte characters count by their UTF-8 size: 11,000 × 3 bytes is over the limit.
    throwsOn(
      () => analytics.track({ ...base, properties: { filler: '✓'.repeat(11_000) } }),
      '.',
      /bytes serialized/,
    )
  })

  test('bad options throw a ValidationError naming the option', () => {
    const make = (options: Record<string, unknown>) => () =>
      new Analytics({ writeKey: 'wk', endpoint: server.url, ...options } as ConstructorParameters<
        typeof Analytics
      >[0])
    throwsOn(make({ writeKey: '' }), '.writeKey', /write key/)
    throwsOn(make({ endpoint: undefined }), '.endpoint', /absolute http\(s\) URL/)
    throwsOn(make({ endpoint: 'ftp://x' }), '.endpoint', /http or https/)
    throwsOn(make({ flushAt: 0 }), '.flushAt', /from 1 to 2500/)
    throwsOn(make({ flushAt: 2501 }), '.flushAt', /from 1 to 2500/)
    throwsOn(make({ flushInterval: 1.5 }), '.flushInterval', /whole number/)
    throwsOn(make({ maxMessageBytes: 600_000 }), '.maxMessageBytes', /from 1 to 511952/)
    throwsOn(make({ fetch: 'fetch' }), '.fetch', /fetch function/)
    assert.equal(
      new Analytics({ writeKey: 'wk', endpoint: 'http://h:1/v1/batch' }).settings.url,
      'http://h:1/v1/batch',
    )
    assert.equal(
      new Analytics({ writeKey: 'wk', endpoint: 'https://h/base//' }).settings.url,
      'https://h/base/v1/batch',
    )
  })

  test('calls after close() throw a ClosedError and queue nothing', async () => {
    const closing = new Analytics({ writeKey: 'wk', endpoint: server.url })
    await closing.close()
    assert.throws(() => closing.track({ userId: 'u1', event: 'E' }), ClosedError)
    assert.throws(() => closing.identify({ userId: 'u1' }), /identify\(\) was called after close\(\)/)
    assert.equal(closing.stats.pending, 0)
  })
})
