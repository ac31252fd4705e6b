/**
 * The scrape-time counters and histograms of the delivery hot path render exactly what prom-client
 * renders for the same observations: same lines, same order within a series, same number format.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { Counter, Histogram, Registry } from 'prom-client'
import { ScrapedCounter, ScrapedHistogram } from '../../src/observe/scraped-metrics.ts'

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const HELP = 'Help with a \\ backslash\nand a newline.'

/** prom-client's text for one metric family, as the registry renders it. */
async function promClientText(register: (registers: Registry[]) => void): Promise<string> {
  const registry = new Registry()
  register([registry])
  return (await registry.metrics()).trimEnd()
}

test('a scraped histogram renders as a prom-client histogram', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          label: fc.constantFrom('dst_a', 'dst "quoted"', 'dst\\slash'),
          value: fc.oneof(fc.constantFrom(...BOUNDS, 0, 11), fc.double({ min: 0, max: 20, noNaN: true })),
        }),
        { maxLength: 40 },
      ),
      async (observations) => {
        const scraped = new ScrapedHistogram('t_seconds', HELP, 'destination', BOUNDS)
        // A series bound but never observed is not shown, as with prom-client.
        scraped.child('dst_unused')
        for (const { label, value } of observations) scraped.child(label).observe(value)
        const expected = await promClientText((registers) => {
          const histogram = new Histogram({
            name: 't_seconds',
            help: HELP,
            labelNames: ['destination'],
            buckets: BOUNDS,
            registers,
          })
          histogram.labels('dst_unused')
          for (const { label, value } of observations) histogram.labels(label).observe(value)
        })
        assert.equal(scraped.render(), expected)
      },
    ),
  )
})

test('a scraped counter renders as a prom-client counter, zero-valued series included', async () => {
  const scraped = new ScrapedCounter('t_total', HELP, ['destination', 'outcome'])
  const expected = await promClientText((registers) => {
    const counter = new Counter({
      name: 't_total',
      help: HELP,
      labelNames: ['destination', 'outcome'],
      registers,
    })
    for (const outcome of ['delivered', 'retrying', 'failed']) counter.labels('dst "a"', outcome).inc(0)
    counter.labels('dst "a"', 'delivered').inc(3)
    counter.labels('dst "a"', 'failed').inc(1)
  })
  for (const outcome of ['delivered', 'retrying', 'failed']) scraped.child('dst "a"', outcome)
  scraped.child('dst "a"', 'delivered').value += 3
  scraped.child('dst "a"', 'failed').value++
  assert.equal(scraped.render(), expected)
})
