// The store contract against the store as the server runs it: SqliteStore on its worker thread behind
// ThreadedSqliteStore, whose calls (and packed ingest groups) cross a thread boundary.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { Store } from '../../src/store/store.ts'
import { storeContract } from './contract.ts'

storeContract({
  name: 'sqlite on its worker thread',
  async open() {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-contract-threaded-'))
    const handles: Store[] = []
    const openOne = async () => {
      const store = new ThreadedSqliteStore({ dataDir, synchronous: 'NORMAL' })
      await store.migrate()
      handles.push(store)
      return store
    }
    return {
      store: await openOne(),
      second: openOne,
      async cleanup() {
        for (const store of handles) await store.close()
        await rm(dataDir, { recursive: true, force: true })
      },
    }
  },
})
