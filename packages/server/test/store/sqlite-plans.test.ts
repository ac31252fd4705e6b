/**
 * Query plans the SQLite store relies on for reads whose cost must not grow with everything stored.
 * Checked on a migrated store file with its own indexes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { RECENT_MESSAGES } from '../../src/store/sqlite/sql/messages.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'

test('the newest calls of a source are read from an index backwards, with no sort of the whole window', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-plans-'))
  const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
  try {
    await store.migrate()
    await store.close()
    const db = new DatabaseSync(join(dataDir, 'sluice.db'), { readOnly: true })
    try {
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${RECENT_MESSAGES}`).all('["a"]', 0, 1, 10) as { detail: string }[]
      )
        .map((step) => step.detail)
        .join('\n')
      assert.match(plan, /messages_by_received/)
      assert.doesNotMatch(plan, /TEMP B-TREE/, plan)
    } finally {
      db.close()
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
})
