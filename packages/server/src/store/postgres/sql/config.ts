import { type ConfigSql, checkStep, configSteps } from '../../tables/config.ts'
import type { PostgresDatabase } from '../database.ts'
import { postgresComputations } from './computations.ts'
import { postgresDestinations } from './destinations.ts'
import { postgresSources } from './sources.ts'

/** The advisory lock that makes applies wait for each other, per schema (as sweep.ts and migrations.ts). */
const LOCK_KEY = "hashtext('sluice.config'), hashtext(COALESCE(current_schema(), ''))"

/** Configuration as code's writes in one transaction: the tables' own statements, which join it. */
export function postgresConfig(db: PostgresDatabase): ConfigSql {
  const tables = {
    sources: postgresSources(db),
    destinations: postgresDestinations(db),
    computations: postgresComputations(db),
  }
  return {
    apply: (writes) =>
      // A deadlock with outcome commits (as deleting a source may meet) rolls it all back: run it again.
      db.retrying(() =>
        db.composedTransaction(async () => {
          // Deleting a source or destination removes its history: may take longer than the usual timeout.
          await db.run('SET LOCAL statement_timeout = 0')
          // Applies of every process one at a time: each then reads what the one before it committed.
          await db.run(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`)
          // One after the other: every statement runs on the transaction's one connection.
          for (const step of configSteps(tables, writes)) checkStep(step, await step.run())
        }),
      ),
  }
}
