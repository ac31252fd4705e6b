/**
 * Who is calling: the admin token (from the configuration), a stored access token, or a web-app session
 * made from either. Answers are cached for `TOKEN_CACHE_MS` so that each request does not cost a store
 * round trip; that is also the longest a revoked token keeps working on any process.
 *
 * Sessions are stateless: the cookie holds `<token id>.<expiry>.<HMAC>`, signed with a key derived from
 * the admin token (every process sharing a database shares it). Each request still looks the token id
 * up, so revoking a token ends its sessions too, and changing the admin token ends all of them. Sign-out
 * records the cookie's hash in the store, so the session ends on every process, as a revocation does.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { hashToken } from '../domain/token-service.ts'
import type { TokenStore } from '../domain/token-store.ts'
import type { AccessToken, TokenRole } from '../domain/tokens.ts'
import { AuthThrottle, DEFAULT_FAILURES_PER_WINDOW } from './auth-throttle.ts'

/** How long a token lookup is trusted: revocation reaches every process within this (well under 5 s). */
export const TOKEN_CACHE_MS = 2_000
/** A session lasts this long after sign-in. */
export const SESSION_MS = 12 * 3_600_000
/** Last use is written at most this often per token, so reads do not turn into writes. */
const LAST_USE_EVERY_MS = 60_000
/** The session id of the admin token, which has no stored record. */
const ADMIN_ID = 'admin'

/** Who a request acts for. */
export interface Principal {
  role: TokenRole
  /** The stored token's id, or `admin` for the configured admin token. */
  tokenId: string
  name: string
}

/** True when `presented` equals `expected`. Hashing both first makes the comparison constant-time and keeps the token's length from leaking. */
export function isAdminToken(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest()
  return timingSafeEqual(digest(presented), digest(expected))
}

/** The key a signed-out session is kept under: the cookie itself, hashed. */
function sessionHash(cookie: string): string {
  return createHash('sha256').update(cookie).digest('hex')
}

const ADMIN: Principal = { role: 'admin', tokenId: ADMIN_ID, name: 'Admin token' }

export class AccessControl {
  /** Failed attempts per client address (auth-throttle.ts); auth.ts and sign-in report to it. */
  readonly throttle: AuthThrottle
  private readonly store: TokenStore
  private readonly adminToken: string
  private readonly sessionKey: Buffer
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>()
  /** Whether a session (by cookie hash) was signed out, as last read; trusted like `cache`. */
  private readonly ended = new Map<string, { ended: boolean; until: number }>()
  private readonly lastUseWritten = new Map<string, number>()

  /** `failuresPerMinute`: `SLUICE_AUTH_FAILURES_PER_MINUTE`, default 20 (0: no throttling). */
  constructor(options: { store: TokenStore; adminToken: string; failuresPerMinute?: number }) {
    if (options.adminToken === '') throw new Error('The admin token must not be empty.')
    this.throttle = new AuthThrottle({
      failuresPerWindow: options.failuresPerMinute ?? DEFAULT_FAILURES_PER_WINDOW,
    })
    this.store = options.store
    this.adminToken = options.adminToken
    this.sessionKey = createHash('sha256').update(`sluice-session:${options.adminToken}`).digest()
  }

  /** The principal a presented token stands for, or null when it is not (or no longer) valid. */
  async identify(token: string): Promise<Principal | null> {
    if (isAdminToken(token, this.adminToken)) return ADMIN
    const hash = hashToken(token)
    return this.cached(`hash:${hash}`, () => this.store.findTokenByHash(hash))
  }

  /** The cookie value of a new session for `principal`. */
  openSession(principal: Principal, now = Date.now()): string {
    const body = `${principal.tokenId}.${now + SESSION_MS}`
    return `${body}.${this.sign(body)}`
  }

  /**
   * The principal of a session cookie; null when it expired or its token was revoked, `'forged'` when
   * Sluice did not sign it (a guess, which the throttle counts).
   */
  async session(cookie: string, now = Date.now()): Promise<Principal | null | 'forged'> {
    const [tokenId, expires, signature] = cookie.split('.')
    if (!tokenId || !expires || !signature) return 'forged'
    const expected = Buffer.from(this.sign(`${tokenId}.${expires}`))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged'
    if (!(Number(expires) > now)) return null
    if (await this.isEnded(cookie)) return null
    if (tokenId === ADMIN_ID) return ADMIN
    return this.cached(`id:${tokenId}`, () => this.store.getToken(tokenId))
  }

  /**
   * Signs a session out: from now on its cookie is refused here at once, and on every other process
   * sharing the store within `TOKEN_CACHE_MS`. A cookie Sluice did not sign, or one expired, needs
   * nothing.
   */
  async endSession(cookie: string, now = Date.now()): Promise<void> {
    if ((await this.session(cookie, now)) === 'forged') return
    const expires = Number(cookie.split('.')[1])
    if (!(expires > now)) return
    const hash = sessionHash(cookie)
    await this.store.endSession(hash, expires)
    this.ended.set(hash, { ended: true, until: expires })
  }

  private async isEnded(cookie: string): Promise<boolean> {
    const hash = sessionHash(cookie)
    const now = Date.now()
    const hit = this.ended.get(hash)
    if (hit && hit.until > now) return hit.ended
    const ended = await this.store.isSessionEnded(hash)
    if (this.ended.size > 10_000) this.ended.clear()
    this.ended.set(hash, { ended, until: now + TOKEN_CACHE_MS })
    return ended
  }

  private sign(body: string): string {
    return createHmac('sha256', this.sessionKey).update(body).digest('base64url')
  }

  private async cached(key: string, lookup: () => Promise<AccessToken | null>): Promise<Principal | null> {
    const now = Date.now()
    const hit = this.cache.get(key)
    let principal: Principal | null
    if (hit && hit.until > now) principal = hit.principal
    else {
      const record = await lookup()
      principal = record && { role: record.role, tokenId: record.id, name: record.name }
      if (this.cache.size > 10_000) this.cache.clear()
      this.cache.set(key, { principal, until: now + TOKEN_CACHE_MS })
    }
    if (principal) this.noteUse(principal.tokenId, now)
    return principal
  }

  private noteUse(tokenId: string, now: number): void {
    if (now - (this.lastUseWritten.get(tokenId) ?? 0) < LAST_USE_EVERY_MS) return
    this.lastUseWritten.set(tokenId, now)
    // Best effort: a failed write of the last-use time must not fail the request.
    this.store.touchToken(tokenId, now).catch(() => this.lastUseWritten.delete(tokenId))
  }
}
