/** The `access_tokens` table, and `ended_sessions` (web-app sessions signed out before their expiry). */
import type { AccessToken, TokenRole } from '../../domain/tokens.ts'
import type { Awaitable } from './sql-types.ts'

export interface TokenRow {
  id: string
  name: string
  role: string
  token_hash: string
  created_at: number
  last_used_at: number | null
}

export interface TokensSql {
  insert(row: TokenRow): Awaitable<void>
  /** Oldest first. */
  list(): Awaitable<TokenRow[]>
  get(id: string): Awaitable<TokenRow | undefined>
  getByHash(tokenHash: string): Awaitable<TokenRow | undefined>
  touch(id: string, at: number): Awaitable<void>
  delete(id: string): Awaitable<boolean>
  /** Records the ended session and removes those expired by `now`, in one transaction. */
  endSession(sessionHash: string, expiresAt: number, now: number): Awaitable<void>
  isSessionEnded(sessionHash: string): Awaitable<boolean>
}

export function toAccessToken(row: TokenRow): AccessToken {
  return {
    id: row.id,
    name: row.name,
    role: row.role as TokenRole,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  }
}
