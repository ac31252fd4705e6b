/**
 * `sluice replay` against a running Sluice: starts a replay with the window, sources, types and
 * events given, prints progress until it ends, exits 0 once FINISHED; refusals are printed as the API
 * words them, with exit 1.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { runCli } from '../helpers/process.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'

let sluice: TestSluice
let receiver: Receiver

before(async () => {
  sluice = await startTestSluice()
  receiver = await startReceiver()
})
after(async () => {
  await sluice.destroy()
  await receiver.close()
})

test('sluice replay sends the selected history and prints progress until it finishes', async () => {
  const source = await sluice.createSource('cli history')
  const batch = [
    ...['a', 'b', 'c'].map((id) => ({
      type: 'track',
      userId: 'u',
      event: 'Signed Up',
      messageId: `cli-${id}`,
    })),
    { type: 'track', userId: 'u', event: 'Other', messageId: 'cli-other' },
    { type: 'identify', userId: 'u', messageId: 'cli-identify' },
  ]
  const from = new Date(Date.now() - 60_000).toISOString()
  assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
  const created = await sluice.api('POST', '/api/v1/destinations', {
    name: 'cli replay target',
    type: 'webhooks',
    sourceIds: [source.id],
    settings: { webhooks: [{ url: `${receiver.url}/in` }] },
  })
  assert.equal(created.status, 201)
  const env = { SLUICE_URL: sluice.url, SLUICE_ADMIN_TOKEN: sluice.adminToken }
  const to = new Date(Date.now() + 1_000).toISOString()
  const run = await runCli(
    [
      'replay',
      created.body.id,
      '--from',
      from,
      '--to',
      to,
      '--source',
      source.id,
      '--type',
      'track',
      '--event',
      'Signed Up',
    ],
    env,
  )
  assert.equal(run.code, 0, run.stderr + run.stdout)
  assert.match(run.stdout, /Replay rpl_\w+ started/)
  assert.match(
    run.stdout,
    /FINISHED: 5 read, 3 matched, 3 enqueued, 0 skipped \(already delivered\), 3 delivered, 0 failed/,
  )
  await until(
    'the replayed calls',
    () => receiver.requests.length,
    (n) => n === 3,
  )
  const ids = receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')).messageId).sort()
  assert.deepEqual(ids, ['cli-a', 'cli-b', 'cli-c'])

  const again = await runCli(['replay', created.body.id, '--from', from, '--to', to, '--json'], env)
  assert.equal(again.code, 0, again.stderr)
  const answer = JSON.parse(again.stdout) as { status: string; skipped: number; enqueued: number }
  assert.deepEqual([answer.status, answer.enqueued, answer.skipped], ['FINISHED', 2, 3])

  const refused = await runCli(['replay', created.body.id, '--from', to, '--to', from], env)
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /answered 400: "from" .* must be before "to"/)
  const usage = await runCli(['replay', created.body.id, '--from', from], env)
  assert.equal(usage.code, 1)
  assert.match(usage.stderr, /replay DESTINATION_ID --from TIME --to TIME/)
})
