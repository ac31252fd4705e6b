// The store contract against the embedded SQLite store, on a fresh temp dir per test: once in-thread,
// and once as the server runs it, on its worker thread behind ThreadedSqliteStore (whose calls, and
// packed ingest groups, cross a thread boundary, and whose announcements ride back on the replies).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.ts'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { Store } from '../../src/store/store.ts'
import { batchContract } from './batch-contract.ts'
import { type StoreBackend, storeContract, type TestStoreOptions } from './contract.ts'
import { healthContract } from './health-contract.ts'
import { privacyContract } from './privacy-contract.ts'
import { replayContract } from './replay-contract.ts'

const variants: { name: string; create(options: SqliteStoreOptions): Store }[] = [
  { name: 'sqlite', create: (options) => new SqliteStore(options) },
  { name: 'sqlite on its worker thread', create: (options) => new ThreadedSqliteStore(options) },
]

for (const variant of variants) {
  const backend: StoreBackend = {
    name: variant.name,
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), 'sluice-contract-'))
      const handles: Store[] = []
      const openOne = async (options: TestStoreOptions = {}) => {
        const store = variant.create({ dataDir, synchronous: 'NORMAL', ...options })
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
  }
  storeContract(backend)
  privacyContract(backend)
  batchContract(backend)
  replayContract(backend)
  healthContract(backend)
}
