/**
 * Access tokens for every caller (management API, CLI): a new token is shown once and only its hash is
 * stored; revoking deletes it.
 */
import { createHash } from 'node:crypto'
import { newSecretToken } from '../lib/ids.ts'
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'
import type { TokenStore } from './token-store.ts'
import { type AccessToken, TOKEN_ROLES, type TokenRole, tokenNotFound } from './tokens.ts'

/** Tokens are stored as the hex SHA-256 of their text: they are long random strings, so no salt is needed. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export interface NewTokenInput {
  /** What the token is for (a person, a dashboard); surrounding whitespace is removed. */
  name: string
  role: string
}

export class TokenService {
  private readonly store: TokenStore

  constructor(store: TokenStore) {
    this.store = store
  }

  /** Creates a token; `token` is its text, which is not kept and cannot be shown again. */
  async create({ name, role }: NewTokenInput): Promise<{ record: AccessToken; token: string }> {
    if (!(TOKEN_ROLES as readonly string[]).includes(role)) {
      throw new ValidationError('/role', `role must be "admin" or "viewer", not "${role}".`)
    }
    const token = `slt_${newSecretToken()}`
    const record = await this.store.createToken({
      name: cleanName(name),
      role: role as TokenRole,
      tokenHash: hashToken(token),
    })
    return { record, token }
  }

  list(): Promise<AccessToken[]> {
    return this.store.listTokens()
  }

  /** Deletes the token: every process refuses it within seconds (see AccessControl). */
  async revoke(id: string): Promise<void> {
    if (!(await this.store.deleteToken(id))) throw tokenNotFound(id)
  }
}
