import type { SourceMinute } from '../../../domain/series.ts'
import {
  attemptMinutesSql,
  BUCKET_COLUMNS,
  EARLIEST_ATTEMPT_SQL,
  type MinuteRow,
  type RollupsSql,
  sourceMinuteCounts,
  toMinuteRow,
} from '../../tables/rollups.ts'
import type { SqliteDatabase } from '../database.ts'

/** delivery_rollups and rollup_progress (see tables/rollups.ts). */
export function sqliteRollups(db: SqliteDatabase): RollupsSql {
  const columns = ['destination_id', 'minute', 'succeeded', 'failed', ...BUCKET_COLUMNS].join(', ')
  const minutes = (text: string, ...params: (string | number)[]) =>
    (db.sql(text).all(...params) as Record<string, unknown>[]).map(toMinuteRow) as MinuteRow[]
  const through = () =>
    (
      db.sql("SELECT through FROM rollup_progress WHERE name = 'deliveries'").get() as
        | { through: number }
        | undefined
    )?.through ?? null
  return {
    through,
    earliestAttempt: () => (db.sql(EARLIEST_ATTEMPT_SQL).get() as { at: number | null }).at,
    rollUp: (from, to) =>
      db.transaction(() => {
        const { changes } = db
          .sql(
            `INSERT OR IGNORE INTO delivery_rollups (${columns}) ${attemptMinutesSql((n) => `?${n}`, false)}`,
          )
          .run(from, to)
        db.sql(
          `INSERT INTO rollup_progress (name, through) VALUES ('deliveries', ?)
           ON CONFLICT (name) DO UPDATE SET through = MAX(through, excluded.through)`,
        ).run(to)
        return Number(changes)
      }),
    rows: (destinationId, from, to) =>
      minutes(
        'SELECT * FROM delivery_rollups WHERE destination_id = ? AND minute >= ? AND minute < ? ORDER BY minute',
        destinationId,
        from,
        to,
      ),
    live: (destinationId, from, to) =>
      minutes(
        attemptMinutesSql((n) => `?${n}`, true),
        from,
        to,
        destinationId,
      ),
    sourceMinutes: (sourceId, from, to) =>
      db
        .sql(
          'SELECT minute, accepted FROM source_rollups WHERE source_id = ? AND minute >= ? AND minute < ? ORDER BY minute',
        )
        .all(sourceId, from, to)
        .map((row): SourceMinute => ({ minute: Number(row.minute), accepted: Number(row.accepted) })),
  }
}

/**
 * Adds an ingest commit's stored calls to source_rollups. Called by the ingest inside its transaction,
 * so the figures commit (or roll back) with the messages they count.
 */
export function addSourceMinutes(
  db: SqliteDatabase,
  messages: readonly { sourceId: string; receivedAt: number }[],
  stored: readonly boolean[],
): void {
  const upsert = db.sql(
    `INSERT INTO source_rollups (source_id, minute, accepted) VALUES (?, ?, ?)
     ON CONFLICT (source_id, minute) DO UPDATE SET accepted = accepted + excluded.accepted`,
  )
  for (const { sourceId, minute, accepted } of sourceMinuteCounts(messages, stored)) {
    upsert.run(sourceId, minute, accepted)
  }
}
