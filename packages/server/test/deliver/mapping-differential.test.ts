// Differential, property-based: the body Sluice sends for a mapping equals the JSON of
// `@segment/actions-core`'s `transform` of the same mapping over the same call (after the field rules),
// for generated mappings over generated calls; a call it fails on fails here too.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import fc from 'fast-check'
import { deliveredBody } from '../../src/deliver/fan-out.ts'
import type { WebhooksSettings } from '../../src/domain/destinations.ts'
import { checkMapping } from '../../src/lib/mapping-language.ts'
import { callArbitrary } from '../helpers/generated-calls.ts'

const require = createRequire(import.meta.url)
const { transform } = require('@segment/actions-core/mapping-kit') as {
  transform: (mapping: unknown, data: unknown) => Record<string, unknown>
}

const path = fc.constantFrom(
  '$.event',
  '$.type',
  '$.userId',
  '$.anonymousId',
  '$.properties.total',
  '$.properties.plan',
  '$.properties.items',
  '$.traits.plan',
  '$.traits.name',
  '$.context.ip',
  '$.missing.deep',
  '$.',
)
const leaf = fc.oneof(
  path.map((p) => ({ '@path': p })),
  fc
    .constantFrom('Hi {{userId}}', '{{event}} / {{properties.plan}}', '{{traits.name}}')
    .map((t) => ({ '@template': t })),
  fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null)).map((v) => ({ '@literal': v })),
  fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean()),
  fc
    .tuple(fc.constantFrom('upper', 'lower'), path)
    .map(([operator, p]) => ({ '@case': { operator, value: { '@path': p } } })),
  path.map((p) => ({ '@replace': { pattern: 'e', replacement: 'E', global: true, value: { '@path': p } } })),
  fc
    .tuple(path, fc.constantFrom('yes', 1))
    .map(([p, then]) => ({ '@if': { exists: { '@path': p }, then, else: 'no' } })),
  // Every form of @if and @case Sluice resolves itself: then omitted, a path or a scalar; else omitted,
  // falsy (never resolved by the kit), a scalar or a path; @case over a literal.
  fc
    .tuple(
      path,
      fc.constantFrom(undefined, 'yes', null, { '@path': '$.userId' }, { '@literal': 'lit' }),
      fc.constantFrom(undefined, null, '', 0, false, 'no', { '@path': '$.event' }),
    )
    .map(([p, then, otherwise]) => ({
      '@if': {
        exists: { '@path': p },
        ...(then === undefined ? {} : { then }),
        ...(otherwise === undefined ? {} : { else: otherwise }),
      },
    })),
  fc
    .tuple(fc.constantFrom('upper', 'lower'), fc.constantFrom('MiXed', '', 'x'))
    .map(([operator, text]) => ({ '@case': { operator, value: { '@literal': text } } })),
  fc
    .tuple(fc.constantFrom('upper', 'lower'), path)
    .map(([operator, p]) => [operator, p, { '@path': p }] as const)
    .map(([operator, p, then]) => ({
      '@case': { operator, value: { '@if': { exists: { '@path': p }, then } } },
    })),
  // Templates (placeholders spaced or not, values of every type, triple braces left to the kit) and
  // replacements (special characters in the pattern, `$&` in the replacement, flags, non-text values).
  fc
    .constantFrom(
      '{{ event }}!{{properties.total}}',
      '{{properties}} {{properties.items}} {{missing}}',
      '{{{userId}}} and {{event}}',
      'no placeholder',
      '{{$.event}}{{}}',
      '{{ traits.name }}-{{context.ip}}-',
    )
    .map((t) => ({ '@template': t })),
  fc
    .tuple(
      fc.constantFrom('e', '.', '$', 'E', '1'),
      fc.constantFrom(undefined, '', '[$&]', '_'),
      fc.constantFrom(undefined, true, false),
      fc.constantFrom(undefined, true, false),
      fc.oneof(
        path.map((p) => ({ '@path': p })),
        fc.constantFrom({ '@literal': 'Ee.e' }, { '@literal': 7 }, 'text.E'),
      ),
    )
    .map(([pattern, replacement, ignorecase, global, value]) => ({
      '@replace': {
        pattern,
        ...(replacement === undefined ? {} : { replacement }),
        ...(ignorecase === undefined ? {} : { ignorecase }),
        ...(global === undefined ? {} : { global }),
        value,
      },
    })),
  fc.constant({
    '@arrayPath': ['$.properties.items', { sku: { '@path': '$.sku' }, p: { '@path': '$.price' } }],
  }),
  // Fails on the calls without properties.p (a path must be text).
  fc.constant({ '@path': { '@path': '$.properties.p' } }),
)
const mappingArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(leaf, { maxLength: 3 })),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), tie('value'), { minKeys: 1, maxKeys: 4 }),
})).object as fc.Arbitrary<Record<string, unknown>>

const webhooks = [{ url: 'https://example.com/h', headers: {} }]

/**
 * Sluice's body for the call is exactly the bytes of `transform`'s, or both fail with one message; true
 * when there was a body to compare.
 */
function sameAsTransform(
  mapping: Record<string, unknown>,
  call: Record<string, unknown>,
  settings: WebhooksSettings,
) {
  let expected: string
  try {
    expected = JSON.stringify(transform(mapping, call))
  } catch (error) {
    assert.throws(() => deliveredBody(call, settings), { message: (error as Error).message })
    return false
  }
  assert.equal(deliveredBody(call, settings).toString('utf8'), expected, JSON.stringify(call))
  return true
}
/** Calls as the store gives them: parsed JSON (fast-check also makes objects without a prototype). */
const storedCalls = callArbitrary.map((call) => JSON.parse(JSON.stringify(call)) as typeof call)

test('differential: generated mappings over generated calls give exactly the bytes of transform', () => {
  let failures = 0
  fc.assert(
    fc.property(mappingArbitrary, storedCalls, (mapping, call) => {
      checkMapping(mapping)
      const settings: WebhooksSettings = {
        webhooks,
        sharedSecret: null,
        mapping,
        filters: [{ action: 'dropFields', fields: ['properties.plan'] }],
      }
      const { plan: _plan, ...properties } = (call.properties ?? {}) as Record<string, unknown>
      const edited = call.properties === undefined ? call : { ...call, properties }
      let expected: string
      try {
        expected = JSON.stringify(transform(mapping, edited))
      } catch (error) {
        failures++
        assert.throws(() => deliveredBody(call, settings), { message: (error as Error).message })
        return
      }
      assert.equal(deliveredBody(call, settings).toString('utf8'), expected)
    }),
    { numRuns: 1_000, seed: 20_261_127 },
  )
  // Both outcomes occur: the property was not vacuous on either side.
  assert.ok(failures > 0 && failures < 1_000, `${failures} failed`)
})

test('differential: one mapping over many calls, each body exactly the bytes of transform (the mapping checked once)', () => {
  fc.assert(
    fc.property(mappingArbitrary, fc.array(storedCalls, { minLength: 2, maxLength: 8 }), (mapping, calls) => {
      checkMapping(mapping)
      const settings: WebhooksSettings = { webhooks, sharedSecret: null, mapping }
      for (const call of calls) sameAsTransform(mapping, call, settings)
    }),
    { numRuns: 300, seed: 20_261_127 },
  )
})

test('a mapping the kit refuses is refused on every call, not only the first', () => {
  const mapping = { a: { '@path': '$.event', '@literal': 'x' } }
  const settings: WebhooksSettings = { webhooks, sharedSecret: null, mapping }
  const call = { type: 'track', event: 'E', messageId: 'm', timestamp: '2026-01-01T00:00:00.000Z' }
  assert.throws(() => transform(mapping, call))
  for (let i = 0; i < 3; i++)
    assert.throws(() => deliveredBody(call, settings), /only have one @-prefixed key/)
})

test('paths of every spelling, beside constants and other directives, give the bytes of transform on every call', () => {
  const paths = [
    '$.',
    '.',
    '',
    '$.event',
    'event',
    '$.properties.total',
    "$.properties['total']",
    '$.properties["plan"]',
    '$.properties.items[0].sku',
    '$.properties.items.0',
    '$.context.$.ip',
    'a$.event',
    '$.$.event',
    '$.event.length',
    '$.constructor',
    '$.properties..total',
    '$.missing.deep',
  ]
  const mapping: Record<string, unknown> = { version: 2, flag: true, none: null, label: 'x' }
  for (const [i, path] of paths.entries()) mapping[`p${i}`] = { '@path': path }
  mapping.upper = { '@case': { operator: 'upper', value: { '@path': '$.event' } } }
  mapping.nested = { inner: { '@path': '$.userId' } }
  mapping.literals = { '@literal': 'sluice' }
  mapping.literalNull = { '@literal': null }
  mapping.literalNumber = { '@literal': 3 }
  mapping.literalObject = { '@literal': { a: { '@path': '$.event' } } }
  mapping[7] = { '@path': '$.type' }
  // The other forms resolved without the kit after the first call.
  mapping.replaceFirst = {
    '@replace': { pattern: 'e', replacement: '[$&]', global: false, value: { '@path': '$.event' } },
  }
  mapping.replaceEvery = { '@replace': { pattern: 'O', ignorecase: true, value: { '@path': '$.event' } } }
  mapping.replaceNumber = {
    '@replace': { pattern: '.', replacement: ',', value: { '@path': '$.properties.total' } },
  }
  mapping.template = { '@template': '{{ event }} by {{userId}}: {{properties}} {{properties.items}}' }
  mapping.ifElse = {
    // biome-ignore lint/suspicious/noThenProperty: `then` is the mapping language's own word for @if.
    '@if': { exists: { '@path': '$.context.ip' }, then: { '@path': '$.context.ip' }, else: 'none' },
  }
  mapping.caseLiteral = { '@case': { operator: 'lower', value: { '@literal': 'MiXed' } } }
  checkMapping(mapping)
  const settings: WebhooksSettings = { webhooks, sharedSecret: null, mapping }
  let compared = 0
  for (const call of fc.sample(storedCalls, { numRuns: 200, seed: 7 })) {
    for (let twice = 0; twice < 2; twice++) if (sameAsTransform(mapping, call, settings)) compared++
  }
  assert.ok(compared > 200, `${compared} compared`)
})
