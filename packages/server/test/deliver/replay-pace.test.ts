/**
 * The replay's pace beside live traffic (deliver/replay-pace.ts), driven with explicit times: the idle
 * rate is measured from steps that had calls to read, and a paced replay always has a next time to
 * step at.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ReplayPace } from '../../src/deliver/replay-pace.ts'

/** Steps of `enqueued` every `everyMs` from `from` for `forMs`; returns the time after the last. */
function steps(
  pace: ReplayPace,
  from: number,
  forMs: number,
  everyMs: number,
  enqueued: number,
  starved = false,
) {
  let at = from
  for (; at < from + forMs; at += everyMs) pace.stepped(at, enqueued, starved)
  pace.stepped(at, enqueued, starved)
  return at
}

test('the idle rate is measured from steps that had calls to read', () => {
  const pace = new ReplayPace()
  assert.equal(pace.idleRate, null)
  steps(pace, 0, 1_000, 100, 32)
  const measured = pace.idleRate
  assert.ok(measured !== null && measured > 250 && measured < 400, `measured ${measured} messages/s`)
})

test('steps that ran out of calls to read (the window end, or the hold) leave the idle rate as it was', () => {
  const pace = new ReplayPace()
  const at = steps(pace, 0, 1_000, 100, 32)
  const measured = pace.idleRate
  // The tail of a window reaching the present: a few calls every poll, for seconds.
  steps(pace, at + 100, 5_000, 250, 2, true)
  assert.equal(pace.idleRate, measured)
})

test('a window of steps that enqueued nothing (every call skipped) does not make the rate 0', () => {
  const pace = new ReplayPace()
  const at = steps(pace, 0, 1_000, 100, 32)
  const measured = pace.idleRate
  steps(pace, at + 100, 3_000, 100, 0)
  assert.equal(pace.idleRate, measured)
})

test('a replay whose first second enqueued nothing is not stopped when live traffic starts', () => {
  const pace = new ReplayPace()
  // Were that second measured as a rate of 0, no token would ever come (a step "at Infinity").
  const at = steps(pace, 0, 1_000, 100, 0)
  pace.liveSeen(at)
  const allowed = pace.allowance(at, 32)
  assert.ok(allowed.read > 0 || Number.isFinite(allowed.retryAt), JSON.stringify(allowed))
})

test('beside live traffic a replay reads in small paced steps, and is always told when to step next', () => {
  const pace = new ReplayPace()
  const at = steps(pace, 0, 1_000, 100, 32)
  const unpaced = pace.allowance(at, 32)
  assert.deepEqual(unpaced, { read: 32, retryAt: null }, 'alone, the room is the limit')
  pace.liveSeen(at)
  let stepsTaken = 0
  let read = 0
  for (let now = at; now < at + 1_000; ) {
    const allowed = pace.allowance(now, 32)
    if (allowed.retryAt !== null) {
      assert.ok(Number.isFinite(allowed.retryAt) && allowed.retryAt > now, `retry at ${allowed.retryAt}`)
      now = allowed.retryAt
      continue
    }
    assert.ok(allowed.read >= 1 && allowed.read <= 32)
    pace.stepped(now, allowed.read)
    pace.liveSeen(now)
    stepsTaken++
    read += allowed.read
    now += 1
  }
  const idle = pace.idleRate ?? 0
  // Over a second at 75% of the idle rate, give or take the bucket's burst.
  assert.ok(
    read <= idle * 0.75 + 40 && read >= idle * 0.5,
    `read ${read} in a second at an idle rate of ${idle}`,
  )
  assert.ok(stepsTaken > 1, 'several small steps, not one large one')
})
