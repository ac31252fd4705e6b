import assert from 'node:assert/strict'
import { test } from 'node:test'
import { thousands } from '../../src/lib/thousands.ts'

test('thousands groups digits as toLocaleString("en") does, for the integers limits and messages use', () => {
  for (const value of [0, 7, 999, 1_000, 10_000, 100_000, 1_000_000, 123_456_789, 4_294_967_295]) {
    assert.equal(thousands(value), value.toLocaleString('en'), String(value))
  }
})
