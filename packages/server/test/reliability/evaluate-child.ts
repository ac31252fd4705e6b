// Child process of profile-crash.test.ts: opens the store named by its arguments and evaluates queued
// profiles once. The test kills it with SIGKILL while its evaluation's transaction cannot commit.
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'

const [kind, location, schema] = process.argv.slice(2)
const store =
  kind === 'postgres'
    ? new PostgresStore({
        connectionString: location!,
        schema: schema!,
        applicationName: 'sluice-evaluate-child',
      })
    : new SqliteStore({ dataDir: location!, synchronous: 'FULL' })
console.log('evaluating')
await store.evaluateComputations(500)
console.log('committed')
await store.close()
