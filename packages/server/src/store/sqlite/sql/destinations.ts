import type {
  ConnectionRow,
  DestinationRow,
  DestinationsSql,
  GatedCountRow,
} from '../../tables/destinations.ts'
import { flag, placeholders, type SqliteDatabase } from '../database.ts'

/** destinations and destination_sources (their connections to sources). */
/** Adds to destinations' gated counters, in one statement; inside the caller's transaction. */
export function addGatedCounts(db: SqliteDatabase, rows: readonly GatedCountRow[]): void {
  if (rows.length === 0) return
  db.sql(
    `INSERT INTO destination_counters (destination_id, shard, filtered, sampled_out) VALUES ${placeholders(rows.length, '(?, 0, ?, ?)')}
     ON CONFLICT (destination_id, shard) DO UPDATE
       SET filtered = filtered + excluded.filtered, sampled_out = sampled_out + excluded.sampled_out`,
  ).run(...rows.flatMap((row) => [row.destination_id, row.filtered, row.sampled_out]))
}

export function sqliteDestinations(db: SqliteDatabase): DestinationsSql {
  const replaceConnections = (destinationId: string, sourceIds: string[]) => {
    db.sql('DELETE FROM destination_sources WHERE destination_id = ?').run(destinationId)
    // An unknown source id fails the FK check; OR IGNORE skips it.
    const insert = db.sql(
      'INSERT OR IGNORE INTO destination_sources (destination_id, source_id) VALUES (?, ?)',
    )
    for (const sourceId of sourceIds) insert.run(destinationId, sourceId)
  }
  return {
    insert(row, sourceIds) {
      db.transaction(() => {
        db.sql(
          'INSERT INTO destinations (id, name, type, enabled, settings, routing, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(
          row.id,
          row.name,
          row.type,
          flag(row.enabled),
          row.settings,
          row.routing,
          row.created_at,
          row.updated_at,
        )
        replaceConnections(row.id, sourceIds)
      })
    },
    list: () =>
      db.sql('SELECT * FROM destinations ORDER BY created_at, id').all() as unknown as DestinationRow[],
    get: (id) => db.sql('SELECT * FROM destinations WHERE id = ?').get(id) as DestinationRow | undefined,
    gatedCounts: (destinationId) =>
      (destinationId === undefined
        ? db
            .sql(
              'SELECT destination_id, SUM(filtered) AS filtered, SUM(sampled_out) AS sampled_out FROM destination_counters GROUP BY destination_id',
            )
            .all()
        : db
            .sql(
              'SELECT destination_id, SUM(filtered) AS filtered, SUM(sampled_out) AS sampled_out FROM destination_counters WHERE destination_id = ? GROUP BY destination_id',
            )
            .all(destinationId)) as unknown as GatedCountRow[],
    connections: (destinationId) =>
      (destinationId === undefined
        ? db.sql('SELECT destination_id, source_id FROM destination_sources ORDER BY source_id').all()
        : db
            .sql(
              'SELECT destination_id, source_id FROM destination_sources WHERE destination_id = ? ORDER BY source_id',
            )
            .all(destinationId)) as unknown as ConnectionRow[],
    update: (id, change, sourceIds) =>
      db.transaction(() => {
        const { changes } = db
          .sql(
            `UPDATE destinations SET name = COALESCE(?, name), enabled = COALESCE(?, enabled),
               settings = COALESCE(?, settings),
               routing = CASE WHEN ? IS NULL THEN routing ELSE ? END, updated_at = ?
             WHERE id = ?`,
          )
          .run(
            change.name,
            change.enabled === null ? null : flag(change.enabled),
            change.settings,
            change.settings,
            change.routing,
            change.updatedAt,
            id,
          )
        if (Number(changes) === 0) return false
        if (sourceIds) replaceConnections(id, sourceIds)
        return true
      }),
    // Connections, deliveries (and so their attempts) cascade.
    delete: (id) => db.sql('DELETE FROM destinations WHERE id = ?').run(id).changes > 0,
    replaceSettings: (id, from, to) =>
      db.sql('UPDATE destinations SET settings = ? WHERE id = ? AND settings = ?').run(to, id, from).changes >
      0,
  }
}
