/** `sluice privacy …` against a real SQLite data dir, run as the user runs it (a child process). */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Source } from '../../src/domain/sources.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { runCli } from '../helpers/process.ts'

let dataDir: string
let source: Source
const CALLS = 2_500

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sluice-privacy-cli-'))
  const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
  await store.migrate()
  source = await store.createSource({ name: 'App', enabled: true })
  const now = Date.now()
  await store.ingest(
    Array.from({ length: CALLS }, (_, i) => ({
      sourceId: source.id,
      messageId: `m${i}`,
      type: 'track' as const,
      receivedAt: now,
      routeTo: [],
      payloadJson: JSON.stringify({ type: 'track', userId: i % 5 === 0 ? 'kept' : 'cli-user', event: 'E' }),
      userId: i % 5 === 0 ? 'kept' : 'cli-user',
    })),
  )
  await store.close()
})
after(() => rm(dataDir, { recursive: true, force: true }))

const cli = (...args: string[]) => runCli(['privacy', ...args], { SLUICE_DATA_DIR: dataDir })

describe('sluice privacy', () => {
  test('delete erases in batches with progress, and status shows the request', async () => {
    const deleted = await cli('delete', 'cli-user', '--source', source.id, '--json')
    assert.equal(deleted.code, 0, deleted.stderr)
    const regulation = JSON.parse(deleted.stdout)
    assert.equal(regulation.regulationType, 'DELETE_ONLY')
    assert.equal(regulation.status, 'FINISHED', 'no destination to notify, erasure done')
    assert.equal(regulation.erased.messages, (CALLS * 4) / 5)
    assert.match(deleted.stderr, /Erased 2,000 messages/)

    const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    assert.equal(await store.countMessages(source.id), CALLS / 5, "only the other user's calls are left")
    await store.close()

    const status = await cli('status', regulation.id)
    assert.equal(status.code, 0)
    assert.match(
      status.stdout,
      new RegExp(`${regulation.id}  DELETE_ONLY  FINISHED  1 user in ${source.id}; erased 2000 messages`),
    )
    const latest = await cli('status')
    assert.match(latest.stdout, new RegExp(regulation.id))
  })

  test('suppress and unsuppress', async () => {
    const suppressed = await cli('suppress', 'a', 'b', '--json')
    assert.equal(suppressed.code, 0, suppressed.stderr)
    assert.deepEqual(JSON.parse(suppressed.stdout).subjectIds, ['a', 'b'])
    const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    assert.deepEqual(
      (await store.listSuppressions()).map((s) => [s.userId, s.sourceId]),
      [
        ['a', null],
        ['b', null],
      ],
    )
    assert.equal((await cli('unsuppress', 'a')).code, 0)
    assert.deepEqual(
      (await store.listSuppressions()).map((s) => s.userId),
      ['b'],
    )
    await store.close()
  })

  test('bad input is refused with what to do', async () => {
    const noIds = await cli('delete')
    assert.equal(noIds.code, 1)
    assert.match(noIds.stderr, /Name at least one user id: sluice privacy delete USER_ID/)
    const unknownSource = await cli('delete', 'u', '--source', 'src_nope')
    assert.equal(unknownSource.code, 1)
    assert.match(unknownSource.stderr, /No source has id "src_nope"/)
    const unknownCommand = await cli('forget', 'u')
    assert.equal(unknownCommand.code, 1)
    assert.match(unknownCommand.stderr, /Unknown privacy command "forget"/)
    const missing = await cli('status', 'reg_missing')
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /No regulation has id "reg_missing"/)
  })
})
