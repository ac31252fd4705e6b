/**
 * What a destination gets, as the form edits it: saved settings shown in the form and sent back, what
 * a new destination sends (only what is set) and a saved one (null to remove), the mapping's JSON
 * checked before anything is sent.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  emptyFilter,
  mappingProblem,
  policyDraft,
  toBatchingSettings,
  toPolicySettings,
} from '../src/model/delivery-policy.ts'

const saved = {
  subscription: 'type = "track"',
  filters: [
    { if: 'event = "Debug"', action: 'drop' as const },
    { action: 'sample' as const, percent: 25 },
    { action: 'dropFields' as const, fields: ['properties.email', 'context.ip'] },
  ],
  mapping: { name: { '@path': '$.event' } },
  method: 'PUT' as const,
}

test('saved settings open in the form and are sent back as they were', () => {
  assert.deepEqual(toPolicySettings(policyDraft(saved), true), saved)
})

test('a new destination sends only what is set; a saved one sends null for what was emptied', () => {
  const empty = policyDraft(undefined)
  assert.deepEqual(toPolicySettings(empty, false), {})
  assert.deepEqual(toPolicySettings(empty, true), {
    subscription: null,
    filters: null,
    mapping: null,
    method: 'POST',
  })
  const sample = { ...empty, filters: [{ ...emptyFilter(), action: 'sample' as const, percent: 'half' }] }
  // Not a number: sent as typed, for the API to point at the field.
  assert.deepEqual(toPolicySettings(sample, false), { filters: [{ action: 'sample', percent: 'half' }] })
})

test('a mapping that is not a JSON object is caught before it is sent', () => {
  assert.equal(mappingProblem(''), null)
  assert.equal(mappingProblem('{"a": {"@path": "$.event"}}'), null)
  assert.match(mappingProblem('{"a": ') ?? '', /^Mapping is not valid JSON/)
  assert.match(mappingProblem('[1]') ?? '', /must be a JSON object/)
})

test('batching opens as saved, is sent back as saved, and null turns it off on a saved destination', () => {
  const batching = { maxEvents: 50, maxBytes: 100_000, maxWaitMs: 250 }
  const draft = policyDraft({ ...saved, batching })
  assert.equal(draft.batching.on, true)
  assert.deepEqual(toBatchingSettings(draft, true), { batching })
  const off = { ...draft, batching: { ...draft.batching, on: false } }
  assert.deepEqual(toBatchingSettings(off, true), { batching: null })
  assert.deepEqual(toBatchingSettings(off, false), {})
  // Off by default, with limits ready for when it is turned on; a limit that is not a number goes as typed.
  const fresh = policyDraft(undefined)
  assert.equal(fresh.batching.on, false)
  const typed = { ...fresh, batching: { ...fresh.batching, on: true, maxEvents: 'many' } }
  assert.deepEqual(toBatchingSettings(typed, false), {
    batching: { maxEvents: 'many', maxBytes: 512_000, maxWaitMs: 1_000 },
  })
})
