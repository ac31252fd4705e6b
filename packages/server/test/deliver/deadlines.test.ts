import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type DeadlineEntry, DeadlineList } from '../../src/deliver/deadlines.ts'
import { eventually, sleep } from './receivers.ts'

interface Entry extends DeadlineEntry {
  name: string
}
const entry = (name: string): Entry => ({ name, deadline: 0, newer: null, older: null, listedIn: null })

describe('DeadlineList', () => {
  test('entries expire in the order they were added, each after the wait', async () => {
    const expired: Array<[string, number]> = []
    const started = performance.now()
    const list = new DeadlineList<Entry>(200, (e) => expired.push([e.name, performance.now() - started]))
    list.add(entry('a'))
    await sleep(100)
    const bAddedAt = performance.now() - started
    list.add(entry('b'))
    list.add(entry('c'))
    assert.ok(await eventually(() => expired.length === 3, 5000), 'all three expired')
    assert.deepEqual(
      expired.map(([name]) => name),
      ['a', 'b', 'c'],
    )
    const [[, a], [, b]] = expired as [[string, number], [string, number]]
    // Never early; late only by what a loaded machine's timers allow.
    assert.ok(a >= 199 && a < 1500, `a expired after ${a} ms`)
    assert.ok(b >= bAddedAt + 199 && b < bAddedAt + 1500, `b expired ${b - bAddedAt} ms after it was added`)
  })

  test('removed entries never expire, wherever they are in the list; removing twice is harmless', async () => {
    const expired: string[] = []
    const list = new DeadlineList<Entry>(40, (e) => expired.push(e.name))
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(entry) as [Entry, Entry, Entry, Entry]
    for (const e of [a, b, c, d]) list.add(e)
    list.remove(a) // oldest
    list.remove(c) // middle
    list.remove(d) // newest
    list.remove(c)
    assert.ok(await eventually(() => expired.length > 0, 5000))
    await sleep(100)
    assert.deepEqual(expired, ['b'])
    assert.equal(b.listedIn, null)
  })

  test('an entry moves from one list to another; removing it from the first no longer touches it', async () => {
    const expired: string[] = []
    const first = new DeadlineList<Entry>(30, (e) => expired.push(`first:${e.name}`))
    const second = new DeadlineList<Entry>(60, (e) => expired.push(`second:${e.name}`))
    const a = entry('a')
    const b = entry('b')
    first.add(a)
    second.add(b)
    first.remove(a)
    second.add(a)
    first.remove(a) // not in `first` any more: must leave `second` intact
    assert.ok(await eventually(() => expired.length >= 2, 5000))
    await sleep(100)
    assert.deepEqual(expired, ['second:b', 'second:a'])
  })

  test('keeps expiring entries added after the list emptied (the timer re-arms)', async () => {
    const expired: string[] = []
    const list = new DeadlineList<Entry>(20, (e) => expired.push(e.name))
    list.add(entry('a'))
    assert.ok(await eventually(() => expired.length === 1, 5000))
    list.add(entry('b'))
    assert.ok(await eventually(() => expired.length === 2, 5000))
    assert.deepEqual(expired, ['a', 'b'])
  })

  test('clear drops every entry and stops the timer', async () => {
    const expired: string[] = []
    const list = new DeadlineList<Entry>(20, (e) => expired.push(e.name))
    const a = entry('a')
    list.add(a)
    list.clear()
    await sleep(50)
    assert.deepEqual(expired, [])
    assert.equal(a.listedIn, null)
  })
})
