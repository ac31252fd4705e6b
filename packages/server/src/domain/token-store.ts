/**
 * What access control asks of storage: access tokens, by id and by hash. One area of the store
 * contract (store/store.ts, with its conventions); the store implements it in store/core/tokens.ts.
 */
import type { AccessToken, TokenRole } from './tokens.ts'

export interface NewAccessToken {
  name: string
  role: TokenRole
  /** Hex SHA-256 of the token; the token itself is never stored. */
  tokenHash: string
}

export interface TokenStore {
  createToken(input: NewAccessToken): Promise<AccessToken>
  /** Oldest first. */
  listTokens(): Promise<AccessToken[]>
  getToken(id: string): Promise<AccessToken | null>
  findTokenByHash(tokenHash: string): Promise<AccessToken | null>
  /** Records a use of the token at `at`. */
  touchToken(id: string, at: number): Promise<void>
  deleteToken(id: string): Promise<boolean>
  /**
   * Ends a web-app session before its expiry (sign-out), by the hash of its cookie: every process
   * sharing the store refuses it from then on. Forgets sessions that have expired anyway.
   */
  endSession(sessionHash: string, expiresAt: number): Promise<void>
  /** Whether the session with this cookie hash was ended by sign-out. */
  isSessionEnded(sessionHash: string): Promise<boolean>
}
