import type { TokenRow, TokensSql } from '../../tables/tokens.ts'
import type { SqliteDatabase } from '../database.ts'

/** access_tokens. */
export function sqliteTokens(db: SqliteDatabase): TokensSql {
  const one = (text: string, value: string) => db.sql(text).get(value) as TokenRow | undefined
  return {
    insert(row) {
      db.sql(
        'INSERT INTO access_tokens (id, name, role, token_hash, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(row.id, row.name, row.role, row.token_hash, row.created_at, row.last_used_at)
    },
    list: () => db.sql('SELECT * FROM access_tokens ORDER BY created_at, id').all() as unknown as TokenRow[],
    get: (id) => one('SELECT * FROM access_tokens WHERE id = ?', id),
    getByHash: (tokenHash) => one('SELECT * FROM access_tokens WHERE token_hash = ?', tokenHash),
    touch(id, at) {
      db.sql('UPDATE access_tokens SET last_used_at = ? WHERE id = ?').run(at, id)
    },
    delete: (id) => db.sql('DELETE FROM access_tokens WHERE id = ?').run(id).changes > 0,
    endSession(sessionHash, expiresAt, now) {
      db.transaction(() => {
        db.sql('DELETE FROM ended_sessions WHERE expires_at <= ?').run(now)
        db.sql('INSERT OR IGNORE INTO ended_sessions (session_hash, expires_at) VALUES (?, ?)').run(
          sessionHash,
          expiresAt,
        )
      })
    },
    isSessionEnded: (sessionHash) =>
      db.sql('SELECT 1 FROM ended_sessions WHERE session_hash = ?').get(sessionHash) !== undefined,
  }
}
