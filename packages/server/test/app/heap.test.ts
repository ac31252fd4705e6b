/**
 * app/heap.ts in a child process of its own (its V8 flags are process-wide): after start-up's
 * leftovers are collected, the main thread's young generation is at the size ingest needs and stays
 * there under allocation, and no script can reach `gc`.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'

const heapModule = join(import.meta.dirname, '../../src/app/heap.ts')

const script = `
import { getHeapSpaceStatistics } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { keepHeapSmall, settleAfterStartup } from ${JSON.stringify(heapModule)}
const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size
keepHeapSmall()
// Start-up's garbage: ~40 MB of short- and some longer-lived objects.
let kept = []
for (let i = 0; i < 1_000_000; i++) { kept.push({ i, s: 'x'.repeat(i % 7) }); if (kept.length > 100_000) kept = [] }
kept = null
const before = young()
settleAfterStartup()
const settled = young()
// A load's allocation afterwards: the young generation does not grow past that size.
let load = []
for (let i = 0; i < 2_000_000; i++) { load.push({ i }); if (load.length > 50_000) load = [] }
console.log(JSON.stringify({ before, settled, loaded: young(), gc: typeof globalThis.gc, gcInNewContext: runInNewContext('typeof gc') }))
`

test('settleAfterStartup keeps an 8 MB young generation, no bigger under load, and exposes no gc', () => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!)
  const MB = 1024 * 1024
  assert.equal(result.settled, 8 * MB, JSON.stringify(result))
  assert.equal(result.loaded, 8 * MB, JSON.stringify(result))
  assert.equal(result.gc, 'undefined')
  assert.equal(result.gcInNewContext, 'undefined')
})

const idleScript = `
import { getHeapSpaceStatistics } from 'node:v8'
import { keepHeapSmall, settleWhenIdle } from ${JSON.stringify(heapModule)}
const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size
keepHeapSmall()
const before = young()
settleWhenIdle(0)
// Busy for 3 s (the event loop ~100% used, in 50 ms turns): the settle waits.
const busyUntil = Date.now() + 3_000
await new Promise((resolve) => {
  const turn = () => {
    const end = Date.now() + 50
    while (Date.now() < end) {}
    if (Date.now() < busyUntil) setImmediate(turn)
    else resolve()
  }
  turn()
})
const whileBusy = young()
// Idle: the settle runs within its next one-second check.
await new Promise((resolve) => setTimeout(resolve, 2_500))
console.log(JSON.stringify({ before, whileBusy, idle: young() }))
`

test('settleWhenIdle waits while the event loop is busy and settles once it is idle', () => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', idleScript], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!)
  const MB = 1024 * 1024
  // Only the settle grows it to 8 MB (the growth factor is 1 otherwise).
  assert.ok(result.before < 8 * MB, JSON.stringify(result))
  assert.ok(result.whileBusy < 8 * MB, `settled while busy: ${JSON.stringify(result)}`)
  assert.equal(result.idle, 8 * MB, JSON.stringify(result))
})
