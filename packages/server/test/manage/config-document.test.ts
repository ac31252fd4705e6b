/**
 * The configuration document's rules, as pure functions: any input is either planned or refused with
 * problems that each carry a pointer (never another error), and what a plan writes is what it shows.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { type CurrentConfig, exportConfig, InvalidDocumentError } from '../../src/domain/config-document.ts'
import { planConfig } from '../../src/domain/config-plan.ts'
import { ValidationError } from '../../src/domain/errors.ts'
import { validateWebhooksSettings } from '../../src/domain/webhook-settings.ts'
import { SETTINGS_FIELDS } from '../../src/manage/config-schemas.ts'

const policy = (input: unknown) => validateWebhooksSettings(input)

const CURRENT: CurrentConfig = {
  sources: [{ id: 'src_1', name: 'Web', writeKey: 'w'.repeat(43), enabled: true, createdAt: 1 }],
  destinations: [
    {
      id: 'dst_1',
      name: 'Hook',
      type: 'webhooks',
      enabled: true,
      sourceIds: ['src_1'],
      settings: { webhooks: [{ url: 'https://example.com/a', headers: {} }], sharedSecret: 'kept' },
      createdAt: 1,
      updatedAt: 1,
    },
  ],
  computedTraits: [
    {
      id: 'ctr_1',
      name: 'Orders',
      key: 'orders',
      kind: 'count',
      event: 'Order Completed',
      property: null,
      where: [],
      withinDays: null,
      destinationIds: ['dst_1'],
      status: 'live',
      error: null,
      createdAt: 1,
      updatedAt: 1,
    },
  ],
  audiences: [
    {
      id: 'aud_1',
      name: 'Buyers',
      key: 'buyers',
      definition: { computedTrait: 'orders', op: '>=', value: 1 },
      destinationIds: [],
      includeAnonymous: false,
      status: 'disabled',
      error: null,
      lastSyncAt: null,
      createdAt: 1,
      updatedAt: 1,
    },
  ],
}

test('any document is planned or refused with pointed problems, never anything else', () => {
  const member = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue()))
  const object = fc.dictionary(
    fc.constantFrom(
      'enabled',
      'writeKey',
      'type',
      'sources',
      'settings',
      'kind',
      'event',
      'property',
      'where',
      'withinDays',
      'key',
      'definition',
      'destinations',
      'includeAnonymous',
    ),
    member,
  )
  const section = fc.dictionary(
    fc.constantFrom('Web', 'Hook', 'Orders', 'Buyers', 'New', ' x'),
    fc.oneof(object, fc.jsonValue()),
  )
  const document = fc.record(
    {
      version: fc.oneof(fc.constant(1), fc.jsonValue()),
      prune: fc.oneof(fc.boolean(), fc.jsonValue()),
      sources: fc.oneof(section, fc.jsonValue()),
      destinations: section,
      computedTraits: section,
      audiences: section,
    },
    { requiredKeys: ['version'] },
  )
  fc.assert(
    fc.property(fc.oneof(document, fc.jsonValue()), (input) => {
      try {
        planConfig(CURRENT, input, SETTINGS_FIELDS, policy)
      } catch (error) {
        assert.ok(error instanceof InvalidDocumentError, String(error))
        assert.ok(error.problems.length > 0)
        for (const problem of error.problems) {
          assert.equal(typeof problem.field, 'string')
          assert.ok(problem.message.length > 0)
        }
      }
    }),
    { numRuns: 2_000 },
  )
})

test('the export plans nothing against the state it came from, with or without secrets', () => {
  for (const secrets of [false, true]) {
    const document = exportConfig(CURRENT, SETTINGS_FIELDS, { secrets })
    const plan = planConfig(CURRENT, document, SETTINGS_FIELDS, policy)
    assert.deepEqual(plan.changes, [])
    assert.deepEqual(plan.writes.destinations.update, [])
  }
  const document = exportConfig(CURRENT, SETTINGS_FIELDS, { secrets: false }) as any
  assert.equal(document.audiences.Buyers.enabled, false, 'a disabled audience exports as enabled: false')
})

test('a reference to an object pruned away is a problem; one kept without prune is not', () => {
  const document = {
    version: 1,
    destinations: {
      'New hook': { sources: ['Web'], settings: { webhooks: [{ url: 'https://example.com/n' }] } },
    },
  }
  const kept = planConfig(CURRENT, document, SETTINGS_FIELDS, policy)
  assert.deepEqual(kept.writes.destinations.create[0]!.sources, [{ id: 'src_1' }])
  assert.deepEqual(
    kept.writes.destinations.create[0]!.settings,
    { webhooks: [{ url: 'https://example.com/n', headers: {} }], sharedSecret: null },
    'settings are written whole, as the policy returns them (no secret is null, not missing)',
  )
  assert.deepEqual(
    kept.changes.map((change) => change.action),
    ['create'],
  )
  assert.throws(
    () => planConfig(CURRENT, { ...document, prune: true }, SETTINGS_FIELDS, policy),
    (error: InvalidDocumentError) =>
      error.problems.some((problem) => problem.field === '/destinations/New hook/sources/0'),
  )
})

test('keys: given for a new object, never changed for an existing one, unique across both kinds', () => {
  const copy = exportConfig(CURRENT, SETTINGS_FIELDS, { secrets: true }) as any
  copy.computedTraits.Orders.key = 'other_key'
  copy.audiences['Renamed buyers'] = { ...copy.audiences.Buyers, key: 'orders' }
  assert.throws(
    () => planConfig(CURRENT, copy, SETTINGS_FIELDS, policy),
    (error: InvalidDocumentError) =>
      JSON.stringify(error.problems.map((problem) => problem.field)) ===
      JSON.stringify(['/computedTraits/Orders/key', '/audiences/Renamed buyers']),
  )
  const fresh = planConfig(
    { sources: [], destinations: [], computedTraits: [], audiences: [] },
    { version: 1, computedTraits: { 'Any Name': { key: 'old_key', kind: 'count', event: 'E' } } },
    SETTINGS_FIELDS,
    policy,
  )
  assert.equal(fresh.writes.computedTraits.create[0]!.key, 'old_key')
})

test('destination settings come from their schema: a setting added there is exported and planned', () => {
  assert.deepEqual(SETTINGS_FIELDS, {
    names: [
      'webhooks',
      'sharedSecret',
      'subscription',
      'filters',
      'mapping',
      'method',
      'batching',
      'autoDisable',
      'maxRequestsPerSecond',
      'signing',
      'standardWebhooksSecret',
    ],
    secrets: ['sharedSecret', 'standardWebhooksSecret'],
  })
  // Settings as a schema may list them (a method, a secret of its own), checked by the policy.
  const fields = {
    names: ['webhooks', 'sharedSecret', 'method', 'signingKey'],
    secrets: ['sharedSecret', 'signingKey'],
  }
  const withMethod = (input: unknown) => {
    const { method, signingKey, ...rest } = input as Record<string, unknown>
    if (method !== undefined && method !== 'POST' && method !== 'PUT') {
      throw new ValidationError('/settings/method', 'method must be POST or PUT.')
    }
    return {
      ...validateWebhooksSettings(rest),
      method: method ?? 'POST',
      signingKey: signingKey ?? null,
    } as never
  }
  const hook = CURRENT.destinations[0]!
  const current = {
    ...CURRENT,
    destinations: [
      {
        ...hook,
        // `disabledUrls`: state Sluice keeps in the settings for itself, in no schema.
        settings: {
          ...hook.settings,
          method: 'POST',
          signingKey: 'k1',
          disabledUrls: ['https://x'],
        } as never,
      },
    ],
  }
  const document = exportConfig(current, fields, { secrets: false }) as any
  assert.equal(document.destinations.Hook.settings.method, 'POST')
  assert.deepEqual(document.destinations.Hook.settings.signingKey, {
    $secret: 'destinations/Hook/signingKey',
  })
  assert.deepEqual(planConfig(current, document, fields, withMethod).changes, [])

  document.destinations.Hook.settings.method = 'PUT'
  const plan = planConfig(current, document, fields, withMethod)
  assert.deepEqual(plan.changes, [
    {
      action: 'update',
      section: 'destinations',
      name: 'Hook',
      fields: [{ field: '/settings/method', from: 'POST', to: 'PUT' }],
    },
  ])
  assert.equal((plan.writes.destinations.update[0]!.settings as any).signingKey, 'k1', 'its secret kept')
  assert.deepEqual(
    (plan.writes.destinations.update[0]!.settings as any).disabledUrls,
    ['https://x'],
    'state kept',
  )
  assert.equal(document.destinations.Hook.settings.disabledUrls, undefined, 'and not exported')
  document.destinations.Hook.settings.method = 'GET'
  assert.throws(
    () => planConfig(current, document, fields, withMethod),
    (error: InvalidDocumentError) => error.problems[0]!.field === '/destinations/Hook/settings/method',
  )
})

test('names, switches and write keys are checked, each problem at its place', () => {
  const problems = (document: unknown) => {
    try {
      planConfig(CURRENT, document, SETTINGS_FIELDS, policy)
      return []
    } catch (error) {
      return (error as InvalidDocumentError).problems.map((problem) => problem.field)
    }
  }
  assert.deepEqual(problems({ version: 1, sources: { ' Padded': {} } }), ['/sources/ Padded'])
  assert.deepEqual(problems({ version: 1, sources: { New: { enabled: 'yes' } } }), ['/sources/New/enabled'])
  assert.deepEqual(problems({ version: 1, sources: { New: { writeKey: 'short' } } }), [
    '/sources/New/writeKey',
  ])
  assert.deepEqual(problems({ version: 1, sources: { New: { writeKey: 'has spaces in it, sixteen+' } } }), [
    '/sources/New/writeKey',
  ])
  assert.deepEqual(problems({ version: 1, sources: { New: { writeKey: 'w'.repeat(43) } } }), [
    '/sources/New/writeKey',
  ])
  assert.deepEqual(problems({ version: 1, $schema: 'https://sluice.example.com/api/config.schema.json' }), [])
  assert.deepEqual(problems({ version: 1, sources: { 'a/b': { extra: 1 } } }), ['/sources/a~1b/extra'])
})
