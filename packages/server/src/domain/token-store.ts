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
}
