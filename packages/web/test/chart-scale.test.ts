/** How charts scale and mark their data: the axis from 0, dots where a line cannot show a point. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DOTS_UP_TO, lonePoints, showDots, valueRange } from '../src/model/chart-scale.ts'

test('the value axis starts at 0 and reaches above the largest value', () => {
  // A latency of 1 ms everywhere reads 0 to a bit over 1, not 6 to 10.
  assert.deepEqual(valueRange([1, 1, null, 1]), [0, 1.15])
  assert.deepEqual(valueRange([0, 0]), [0, 1])
  assert.deepEqual(valueRange([null, null]), [0, 1])
  assert.deepEqual(valueRange([200, 40]), [0, 200 * 1.15])
})

test('a lone point is drawn as a dot; a long series as a line', () => {
  assert.equal(showDots([[null, null, 3, null]]), true)
  assert.equal(showDots([Array.from({ length: DOTS_UP_TO + 1 }, () => 1)]), false)
})

test('in a long series, a value among empty or zero neighbours gets a dot; a run of values does not', () => {
  assert.deepEqual(lonePoints([0, 0, 0, 1]), [3])
  assert.deepEqual(lonePoints([null, 4, null, 0, 2, 3, 0]), [1])
  assert.deepEqual(lonePoints([0, 0, 0]), [])
  assert.deepEqual(lonePoints([5]), [0])
})
