import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type DeadlineEntry, DeadlineList } from '../../src/deliver/deadlines.ts'
import { sleep } from './receivers.ts'

interface Entry extends DeadlineEntry {
  name: string
}
const entry = (name: string): Entry => ({ name, deadline: 0, newer: null, older: null, listedIn: null })

describe('DeadlineList', () => {
  test('entries expire in the order they were added, each after the wait', async () => {
    const expired: Array<[string, number]> = []
    const started = performance.now()
    const list = new DeadlineList<Entry>(60, (e) => expired.push([e.name, performance.now() - started]))
    list.add(entry('a'))
    await sleep(20)
    list.add(entry('b'))
    list.add(entry('c'))
    await sleep(150)
    assert.deepEqual(
      expired.map(([name]) => name),
      ['a', 'b', 'c'],
    )
    const [[, a], [, b]] = expired as [[string, number], [string, number]]
    assert.ok(a >= 60 && a < 100, `a expired after ${a} ms`)
    assert.ok(b >= 80 && b < 130, `b expired after ${b} ms`)
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
    await sleep(80)
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
    await sleep(100)
    assert.deepEqual(expired, ['second:b', 'second:a'])
  })

  test('keeps expiring entries added after the list emptied (the timer re-arms)', async () => {
    const expired: string[] = []
    const list = new DeadlineList<Entry>(20, (e) => expired.push(e.name))
    list.add(entry('a'))
    await sleep(50)
    list.add(entry('b'))
    await sleep(50)
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
