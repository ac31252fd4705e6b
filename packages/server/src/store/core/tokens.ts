/** The access-token area of the store core (domain/token-store.ts). */
import type { NewAccessToken, TokenStore } from '../../domain/token-store.ts'
import type { AccessToken } from '../../domain/tokens.ts'
import { newId } from '../../lib/ids.ts'
import { type TokensSql, toAccessToken } from '../tables/tokens.ts'

export class TokensCore implements TokenStore {
  readonly #sql: TokensSql

  constructor(sql: TokensSql) {
    this.#sql = sql
  }

  async createToken(input: NewAccessToken): Promise<AccessToken> {
    const row = {
      id: newId('tok'),
      name: input.name,
      role: input.role,
      token_hash: input.tokenHash,
      created_at: Date.now(),
      last_used_at: null,
    }
    await this.#sql.insert(row)
    return toAccessToken(row)
  }

  async listTokens(): Promise<AccessToken[]> {
    return (await this.#sql.list()).map(toAccessToken)
  }

  async getToken(id: string): Promise<AccessToken | null> {
    const row = await this.#sql.get(id)
    return row ? toAccessToken(row) : null
  }

  async findTokenByHash(tokenHash: string): Promise<AccessToken | null> {
    const row = await this.#sql.getByHash(tokenHash)
    return row ? toAccessToken(row) : null
  }

  async touchToken(id: string, at: number): Promise<void> {
    await this.#sql.touch(id, at)
  }

  async deleteToken(id: string): Promise<boolean> {
    return this.#sql.delete(id)
  }

  async endSession(sessionHash: string, expiresAt: number): Promise<void> {
    await this.#sql.endSession(sessionHash, expiresAt, Date.now())
  }

  async isSessionEnded(sessionHash: string): Promise<boolean> {
    return this.#sql.isSessionEnded(sessionHash)
  }
}
