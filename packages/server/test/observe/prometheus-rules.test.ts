/**
 * deploy/prometheus/alerts.yml: valid for Prometheus (`promtool check rules`, from Debian's
 * `prometheus` package), and every metric its expressions name is one a real Sluice exports.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'

const RULES = join(import.meta.dirname, '../../../../deploy/prometheus/alerts.yml')

interface RuleFile {
  groups: { name: string; rules: { alert: string; expr: string; labels?: Record<string, string> }[] }[]
}

let sluice: TestSluice
before(async () => {
  sluice = await startTestSluice()
})
after(() => sluice.destroy())

// promtool is Debian's (`apt-get install prometheus`); CI installs it (.ci/run). On a machine without it
// the rules are still checked below, by parsing them against what Sluice exports.
test('promtool accepts the alert rules, where it is installed', async (t) => {
  const run = promisify(execFile)
  const checked = await run('promtool', ['check', 'rules', RULES]).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })
  if (checked === null) {
    assert.notEqual(
      process.env.CI,
      'true',
      'CI must check the rules with promtool: apt-get install prometheus',
    )
    t.diagnostic(
      'promtool is not installed (apt-get install prometheus): the rules are checked by parsing only',
    )
    return
  }
  assert.match(checked.stdout, /SUCCESS: 5 rules found/)
})

test('every metric the rules name is exported by Sluice, and each rule has a severity', async () => {
  const rules = parse(await readFile(RULES, 'utf8')) as RuleFile
  const response = await fetch(`${sluice.url}/metrics`, {
    headers: { authorization: `Bearer ${sluice.adminToken}` },
  })
  assert.equal(response.status, 200)
  const exported = new Set([...(await response.text()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]))
  const alerts = rules.groups.flatMap((group) => group.rules)
  assert.deepEqual(alerts.map((rule) => rule.alert).sort(), [
    'SluiceDeliveriesDeadLettered',
    'SluiceDestinationAllUrlsDisabled',
    'SluiceDestinationUrlDisabled',
    'SluiceDestinationUrlFailing',
    'SluiceDestinationUrlLowSuccessRate',
  ])
  for (const rule of alerts) {
    const named = [...rule.expr.matchAll(/\bsluice_[a-z0-9_]+/g)].map((m) => m[0])
    assert.ok(named.length > 0, `${rule.alert} names no Sluice metric`)
    for (const name of named)
      assert.ok(exported.has(name), `${rule.alert} uses ${name}, which Sluice does not export`)
    assert.ok(rule.labels?.severity, `${rule.alert} has no severity`)
  }
})
