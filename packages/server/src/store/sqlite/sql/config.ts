import { type ConfigSql, checkStep, configSteps } from '../../tables/config.ts'
import type { SqliteDatabase } from '../database.ts'
import { sqliteComputations } from './computations.ts'
import { sqliteDestinations } from './destinations.ts'
import { sqliteSources } from './sources.ts'

/** Configuration as code's writes in one transaction: the tables' own statements, which join it. */
export function sqliteConfig(db: SqliteDatabase): ConfigSql {
  const tables = {
    sources: sqliteSources(db),
    destinations: sqliteDestinations(db),
    computations: sqliteComputations(db),
  }
  return {
    apply: (writes) =>
      db.transaction(() => {
        for (const step of configSteps(tables, writes)) checkStep(step, step.run())
      }),
  }
}
