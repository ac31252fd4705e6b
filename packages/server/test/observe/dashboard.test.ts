/**
 * The Grafana dashboard (deploy/grafana/sluice.json) queries only metrics that `/metrics` serves, so a
 * renamed metric cannot leave a panel silently empty.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startTestSluice } from '../helpers/sluice.ts'

const DASHBOARD = join(import.meta.dirname, '../../../../deploy/grafana/sluice.json')

/** Every metric name a PromQL expression mentions (functions, labels and keywords are not metric names). */
function metricNames(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '')
  const withoutGrouping = withoutLabels.replace(/\b(by|without)\s*\([^)]*\)/g, '')
  return [...withoutGrouping.matchAll(/\b([a-z_:][a-z0-9_:]*)\b(?!\s*\()/g)]
    .map((match) => match[1]!)
    .filter((name) => /^(sluice|nodejs|process)_/.test(name))
}

test('every metric the Grafana dashboard queries is served by /metrics', async () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'))
  const exprs: string[] = [
    ...dashboard.panels.flatMap((panel: any) => (panel.targets ?? []).map((t: any) => t.expr)),
    ...dashboard.templating.list.filter((v: any) => v.type === 'query').map((v: any) => v.definition),
  ]
  const queried = new Set(exprs.flatMap(metricNames))
  assert.ok(queried.size >= 12, `the dashboard queries ${queried.size} metrics`)

  const sluice = await startTestSluice()
  try {
    const response = await fetch(`${sluice.url}/metrics`, {
      headers: { authorization: `Bearer ${sluice.adminToken}` },
    })
    const text = await response.text()
    // Every family is announced with its type, even before it has a sample; a histogram's series
    // are its name with _bucket, _sum and _count.
    const served = new Set<string>()
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      served.add(name!)
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) served.add(name! + suffix)
    }
    const missing = [...queried].filter((name) => !served.has(name))
    assert.deepEqual(missing, [], 'queried by the dashboard but not served')
  } finally {
    await sluice.destroy()
  }
})
