import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { debugEnabled } from '../src/lib/debug.ts'
import { startServer, type TestServer } from './helpers/server.ts'

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url))

/** Runs a script that sends two tracks with `DEBUG` set as given; resolves with its stderr. */
function runWithDebug(debug: string | undefined, endpoint: string): Promise<string> {
  const script = `
    import { Analytics } from ${JSON.stringify(entry)}
    const analytics = new Analytics({ writeKey: 'wk', endpoint: ${JSON.stringify(endpoint)}, retryBaseDelay: 5 })
    analytics.track({ userId: 'u1', event: 'A' })
    analytics.track({ userId: 'u1', event: 'B' })
    await analytics.close()
  `
  const env = { ...process.env }
  delete env.DEBUG
  if (debug !== undefined) env.DEBUG = debug
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(stderr) : reject(new Error(`exit ${code}: ${stderr}`))))
  })
}

describe('DEBUG logging', () => {
  let server: TestServer
  before(async () => {
    // The first request of each run fails once, so the retry is logged too.
    const seen = new Set<string>()
    server = await startServer((request) => {
      const key = request.body.batch[0]!.messageId
      if (seen.has(key)) return {}
      seen.add(key)
      return { status: 503, body: 'Service Unavailable' }
    })
  })
  after(() => server.close())

  test('DEBUG=analytics logs queueing, flushes, responses, retries and close to stderr', async () => {
    const stderr = await runWithDebug('analytics', server.url)
    const lines = stderr.trim().split('\n')
    for (const line of lines) assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z analytics /)
    const expected = [
      /@sluice\/analytics 0\.1\.0: sending to http:\/\/127\.0\.0\.1:\d+\/v1\/batch with node:http, flushAt 20, flushInterval 5000 ms/,
      /queued track [0-9a-f-]{36} \(\d+ bytes, 1 pending\)/,
      /queued track [0-9a-f-]{36} \(\d+ bytes, 2 pending\)/,
      /closing: 2 messages pending/,
      /flush \(flush\(\)\): batch #1, 2 messages/,
      /sending batch #1: 2 messages, \d+ bytes, attempt 1/,
      /batch #1: HTTP 503: Service Unavailable; retrying in \d+ ms \(retry 1 of 10\)/,
      /sending batch #1: 2 messages, \d+ bytes, attempt 2/,
      /batch #1: HTTP 200, 2 delivered, 0 rejected/,
      /closed: 2 delivered, 0 failed, 0 dropped/,
    ]
    assert.equal(lines.length, expected.length, stderr)
    for (const [index, pattern] of expected.entries()) assert.match(lines[index]!, pattern)
  })

  test('DEBUG=* and comma lists enable it; other names and exclusions do not', async () => {
    assert.match(await runWithDebug('*', server.url), /analytics queued track/)
    assert.match(await runWithDebug('express:*,analytics', server.url), /analytics queued track/)
    assert.equal(await runWithDebug('express', server.url), '')
    assert.equal(await runWithDebug('*,-analytics', server.url), '')
    assert.equal(await runWithDebug(undefined, server.url), '')
  })

  test('debugEnabled follows the debug package rules', () => {
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ['', false],
      ['analytics', true],
      ['*', true],
      ['analy*', true],
      ['other analytics', true],
      ['other,  analytics', true],
      ['analytics:*', false],
      ['analytics-node', false],
      ['-analytics,*', false],
      ['*,-analytics', false],
      ['a.alytics', false],
    ]
    for (const [spec, enabled] of cases)
      assert.equal(debugEnabled('analytics', spec), enabled, `DEBUG=${spec}`)
  })
})
