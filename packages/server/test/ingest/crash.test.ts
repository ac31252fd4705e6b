import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { runCli, spawnSluice } from '../helpers/process.ts'
import { send } from '../helpers/tracking.ts'

test('kill -9 during ingest: every acknowledged message is in the store after restart', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-crash-'))
  try {
    const created = await runCli(['sources', 'create', 'crash', '--json'], { SLUICE_DATA_DIR: dataDir })
    const source = JSON.parse(created.stdout) as { id: string; writeKey: string }
    const sluice = await spawnSluice({ SLUICE_DATA_DIR: dataDir })

    const acked: string[] = []
    let killed = false
    const sender = async (worker: number) => {
      for (let n = 0; !killed; n++) {
        const batch = Array.from({ length: 20 }, (_, i) => ({
          type: 'track',
          userId: 'u',
          event: 'E',
          messageId: `w${worker}-${n}-${i}`,
        }))
        try {
          const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
          if (response.status === 200) acked.push(...batch.map((m) => m.messageId))
        } catch {
          // the connection died with the process: not acknowledged, so not promised
          return
        }
      }
    }
    const senders = [0, 1, 2, 3].map(sender)
    // Kill mid-load: once a few hundred messages are acknowledged (bounded wait on a slow machine).
    for (const end = Date.now() + 15_000; acked.length < 200 && Date.now() < end; ) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    sluice.child.kill('SIGKILL')
    killed = true
    assert.equal(await sluice.exited, 'SIGKILL')
    await Promise.all(senders)

    assert.ok(acked.length >= 100, `expected load before the kill, got ${acked.length} acked`)
    const store = new SqliteStore({ dataDir, synchronous: 'FULL' })
    await store.migrate()
    const missing: string[] = []
    for (const messageId of acked) {
      if (!(await store.getMessage(source.id, messageId))) missing.push(messageId)
    }
    await store.close()
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged messages were lost`)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
})
