import { NotFoundError } from './errors.ts'

/**
 * Access tokens: who may use the management API and the web app. `admin` may do everything; `viewer`
 * may read (every GET and the live debugger) but change nothing and never sees a secret.
 */
export const TOKEN_ROLES = ['admin', 'viewer'] as const
export type TokenRole = (typeof TOKEN_ROLES)[number]

/** A token as stored: the token itself is never kept, only its hash. */
export interface AccessToken {
  id: string
  name: string
  role: TokenRole
  createdAt: number
  /** When the token last authenticated a request (updated at most once a minute); null if never. */
  lastUsedAt: number | null
}

export function tokenNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'token_not_found',
    `No access token has id "${id}". List the existing tokens with GET /api/v1/tokens.`,
  )
}
