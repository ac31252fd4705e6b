import type { SweepSql } from '../../core/sweep.ts'
import type { SqliteDatabase } from '../database.ts'

/**
 * Retention's statements. Each DELETE commits by itself, so the write lock is held one chunk at a time;
 * `between` chunks, the store's other calls get their turn (SqliteStore.yieldTurn).
 */
export function sqliteSweep(db: SqliteDatabase, between: () => Promise<void>): SweepSql {
  return {
    // One process writes the file: no other sweep can run meanwhile.
    exclusive: (work) =>
      work({
        between,
        messagesAfter: (afterPk, limit) =>
          db
            .sql('SELECT pk, received_at FROM messages WHERE pk > ? ORDER BY pk LIMIT +?')
            .all(afterPk, limit) as {
            pk: number
            received_at: number
          }[],
        // Their deliveries and attempts go by FK cascade.
        deleteIfFinal: (pks) =>
          Number(
            db
              .sql(
                `DELETE FROM messages WHERE pk IN (SELECT value FROM json_each(?))
                 AND pk <= (SELECT high_pk FROM profile_cursor)
                 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = messages.pk AND d.status IN ('pending', 'retrying'))`,
              )
              .run(JSON.stringify(pks)).changes,
          ),
        // Their attempts go by FK cascade.
        dropEmptyBatches: () => {
          db.sql(
            `DELETE FROM delivery_batches WHERE status IN ('delivered', 'failed')
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = delivery_batches.id)`,
          ).run()
        },
        // Dedupe looks ids up among stored messages (ingest.ts): there are no keys to expire.
        expireDedupeKeys: () => 0,
      }),
  }
}
