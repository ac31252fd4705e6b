/**
 * When the engine may forget a settled outcome: only once no claim that could have read the row
 * before its record is still to answer.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SettledOutcomes } from '../../src/deliver/settled-outcomes.ts'

test('with no claim running, a recorded outcome is forgotten at once', () => {
  const settled = new SettledOutcomes()
  settled.settle(7, 0)
  assert.equal(settled.has(7, 0), true)
  assert.equal(settled.has(7, 1), false, 'a row read after the record (a retry) is not held back')
  settled.recorded(7, 0)
  assert.equal(settled.has(7, 0), false)
})

test('a recorded outcome is kept until every claim started before its commit returned has ended', () => {
  const settled = new SettledOutcomes()
  settled.settle(1, 0)
  settled.settle(2, 0)
  const first = settled.claimStarted()
  settled.recorded(1, 0)
  const second = settled.claimStarted()
  settled.recorded(2, 0)
  settled.claimEnded(first)
  assert.equal(settled.has(1, 0), false, 'no claim from before its commit is left')
  assert.equal(settled.has(2, 0), true, 'the second claim may still bring it back')
  const later = settled.claimStarted()
  settled.claimEnded(second)
  assert.equal(settled.has(2, 0), false, 'a claim started after the commit returned reads the record')
  settled.claimEnded(later)
})

test('claims that end out of order hold an outcome until the oldest of them ends', () => {
  const settled = new SettledOutcomes()
  settled.settle(3, 2)
  const older = settled.claimStarted()
  const newer = settled.claimStarted()
  settled.recorded(3, 2)
  settled.claimEnded(newer)
  assert.equal(settled.has(3, 2), true)
  settled.claimEnded(older)
  assert.equal(settled.has(3, 2), false)
})

test('a delivery settled again at a later attempt is not forgotten by its earlier record', () => {
  const settled = new SettledOutcomes()
  settled.settle(4, 0)
  const claim = settled.claimStarted()
  settled.recorded(4, 0)
  // The retry was claimed (at count 1) and sent; its own outcome is not recorded yet.
  settled.settle(4, 1)
  settled.claimEnded(claim)
  assert.equal(settled.has(4, 1), true)
  settled.recorded(4, 1)
  assert.equal(settled.has(4, 1), false)
})
