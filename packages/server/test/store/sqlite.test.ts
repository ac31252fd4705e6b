// The store contract against the embedded SQLite store, on a fresh temp dir per test.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import { storeContract } from './contract.ts'

storeContract({
  name: 'sqlite',
  async open() {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-contract-'))
    const handles: Store[] = []
    const openOne = async () => {
      const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
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
