// The store contract against the PostgreSQL store, on a fresh schema per test in the real PostgreSQL
// (see pg.ts). PostgreSQL-only behaviour is tested in postgres-only.test.ts.
import type { PostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { batchContract } from './batch-contract.ts'
import { type StoreBackend, storeContract, type TestStoreOptions } from './contract.ts'
import { healthContract } from './health-contract.ts'
import { freshSchema, openPgStore } from './pg.ts'
import { privacyContract } from './privacy-contract.ts'
import { replayContract } from './replay-contract.ts'

const backend: StoreBackend = {
  name: 'postgres',
  async open() {
    const { schema, drop } = await freshSchema()
    const handles: PostgresStore[] = []
    const openOne = async (options: TestStoreOptions = {}) => {
      const store = await openPgStore(schema, options)
      handles.push(store)
      return store
    }
    return {
      store: await openOne(),
      second: openOne,
      async cleanup() {
        for (const store of handles) await store.close()
        await drop()
      },
    }
  },
}

storeContract(backend)
privacyContract(backend)
batchContract(backend)
replayContract(backend)
healthContract(backend)
