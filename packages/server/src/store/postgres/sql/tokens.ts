import type { TokenRow, TokensSql } from '../../tables/tokens.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** access_tokens. */
export function postgresTokens(db: PostgresDatabase): TokensSql {
  const first = async (text: string, value: string) => (await db.query<TokenRow>(text, [pgText(value)]))[0]
  return {
    async insert(row) {
      await db.query(
        'INSERT INTO access_tokens (id, name, role, token_hash, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [row.id, pgText(row.name), row.role, row.token_hash, row.created_at, row.last_used_at],
      )
    },
    list: () => db.query<TokenRow>('SELECT * FROM access_tokens ORDER BY created_at, id'),
    get: (id) => first('SELECT * FROM access_tokens WHERE id = $1', id),
    getByHash: (tokenHash) => first('SELECT * FROM access_tokens WHERE token_hash = $1', tokenHash),
    async touch(id, at) {
      await db.query('UPDATE access_tokens SET last_used_at = $2 WHERE id = $1', [id, at])
    },
    delete: async (id) =>
      (await db.query('DELETE FROM access_tokens WHERE id = $1 RETURNING id', [pgText(id)])).length > 0,
    async endSession(sessionHash, expiresAt, now) {
      // One statement: the insert and the clean-up commit together.
      await db.query(
        `WITH expired AS (DELETE FROM ended_sessions WHERE expires_at <= $3)
         INSERT INTO ended_sessions (session_hash, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        [sessionHash, expiresAt, now],
      )
    },
    isSessionEnded: async (sessionHash) =>
      (await db.query('SELECT 1 FROM ended_sessions WHERE session_hash = $1', [sessionHash])).length > 0,
  }
}
