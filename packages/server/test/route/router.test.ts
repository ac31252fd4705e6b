// The router the ingest transaction uses: for lists of targets with generated subscriptions and
// filters, the targets it sends each call to, and its filtered and sampled-out counts, are exactly those
// of judging every target on the parsed call, whether its decisions are remembered or not.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DestinationFilter } from '../../src/domain/destinations.ts'
import { compileGate, passGate, Router, type RoutingTarget } from '../../src/route/gates.ts'
import { generatedCalls, generatedSubscriptions } from '../helpers/generated-calls.ts'

const FILTERS: DestinationFilter[][] = [
  [{ action: 'sample', percent: 50 }],
  [{ if: 'event = "Signed Up"', action: 'drop' }],
  [{ action: 'dropFields', fields: ['context.ip'] }],
]

/** Twenty targets: most with a generated subscription, some with filters too, some with neither, one of another kind. */
function targetsOf(seed: number): RoutingTarget[] {
  const subscriptions = generatedSubscriptions(20, seed)
  return subscriptions.map((subscription, i) => {
    const filters = i % 5 === 1 ? FILTERS[i % FILTERS.length]! : undefined
    const settings =
      i % 7 === 3
        ? {}
        : i % 9 === 4
          ? { filters: FILTERS[0]! }
          : { subscription, ...(filters && { filters }) }
    return { id: `d${i}`, type: i === 19 ? 'other' : 'webhooks', gate: compileGate(settings) }
  })
}

/** What judging each target on the parsed call decides: targets kept, and the counts of the others. */
function expected(targets: readonly RoutingTarget[], calls: { routeTo: string[]; json: string }[]) {
  const kept: number[][] = []
  const counts = new Map<string, [number, number]>()
  for (const { routeTo, json } of calls) {
    const call = JSON.parse(json) as Record<string, unknown>
    const goes: number[] = []
    for (const [i, target] of targets.entries()) {
      if (!routeTo.includes(target.type)) continue
      const verdict = target.gate === null ? 'kept' : passGate(target.gate, call).verdict
      if (verdict === 'kept') {
        goes.push(i)
        continue
      }
      const count = counts.get(target.id) ?? [0, 0]
      count[verdict === 'filtered' ? 0 : 1]++
      counts.set(target.id, count)
    }
    kept.push(goes)
  }
  return { kept, counts }
}

describe('router', () => {
  test('differential: the targets and counts of judging every target on the parsed call, commit after commit', () => {
    const tricky = [
      { type: 'track', event: 'Say "hi"\\', properties: { event: 'Order Completed' }, messageId: 't1' },
      { type: 'track', event: 'Order Completed', properties: { note: 'x\\"event\\":\\"y' }, messageId: 't2' },
      { type: 'track', event: '', messageId: 't3' },
      { type: 'identify', traits: { event: 'Signed Up' }, messageId: 't4' },
    ]
    // Each call comes three times: the later ones are decided from what the first left behind.
    const calls = [...generatedCalls(300, 21), ...tricky].flatMap((call, i) => {
      const json = JSON.stringify(call)
      const routeTo = i % 11 === 0 ? [] : i % 13 === 0 ? ['webhooks', 'other'] : ['webhooks']
      return [0, 1, 2].map(() => ({ routeTo, json }))
    })
    let sent = 0
    let counted = 0
    for (const seed of [1, 2, 3, 4, 5]) {
      const targets = targetsOf(seed)
      const router = new Router(targets)
      const want = expected(targets, calls)
      // Three commits over the same router: counts are per commit, decisions are kept.
      for (let commit = 0; commit < 3; commit++) {
        router.startCommit()
        for (const [c, { routeTo, json }] of calls.entries()) {
          assert.deepEqual([...router.route(routeTo, json)], want.kept[c], `seed ${seed}, call ${json}`)
          sent += want.kept[c]!.length
        }
        assert.deepEqual(router.takeGatedCounts(), want.counts, `seed ${seed}`)
        counted += [...want.counts.values()].reduce((sum, [f, s]) => sum + f + s, 0)
      }
    }
    // Not vacuous: calls both go and are kept out, by subscriptions and by sampling.
    assert.ok(sent > 1_000 && counted > 1_000, `${sent} sent, ${counted} counted`)
  })

  test('with more distinct calls than it remembers, and after a commit that failed, it decides and counts the same', () => {
    const targets: RoutingTarget[] = [
      { id: 'a', type: 'webhooks', gate: compileGate({ subscription: 'event = "Event 7"' }) },
      { id: 'b', type: 'webhooks', gate: compileGate({ subscription: 'type = "track" and userId = "u1"' }) },
      { id: 'c', type: 'webhooks', gate: null },
    ]
    const calls = Array.from({ length: 2_500 }, (_, i) => ({
      routeTo: ['webhooks'],
      json: JSON.stringify({
        type: 'track',
        event: `Event ${i % 1_200}`,
        userId: `u${i % 3}`,
        messageId: `m${i}`,
      }),
    }))
    const router = new Router(targets)
    // A commit that failed half way: what it counted is not carried into the next one.
    for (const { routeTo, json } of calls.slice(0, 100)) router.route(routeTo, json)
    router.startCommit()
    const want = expected(targets, calls)
    for (const [c, { routeTo, json }] of calls.entries()) {
      assert.deepEqual([...router.route(routeTo, json)], want.kept[c], json)
    }
    assert.deepEqual(router.takeGatedCounts(), want.counts)
    assert.deepEqual(router.takeGatedCounts(), new Map())
  })
})
