/**
 * Failed authentication, throttled per client address: after `failuresPerWindow` failures (default
 * 20, `SLUICE_AUTH_FAILURES_PER_MINUTE`) within one window of a minute, counted from the address's
 * first failure, every authentication attempt from that address — right or wrong — answers `429`
 * with `Retry-After` until the window has passed; then the count starts again. A right answer during
 * the lockout would tell a guesser they had found the token, so none is given.
 *
 * What counts as a failure: a Bearer token that is not the admin token or a valid access token, a
 * session cookie Sluice did not sign, a wrong token at sign-in. What does not: a request with no
 * credentials at all (the web app asks who is signed in on every load), a malformed Authorization
 * header (it tests no token), an expired session or one whose token was revoked (Sluice signed it:
 * no guess), and anything that succeeds. Nothing is counted or looked up for the Tracking API: write
 * keys are 256 random bits, unguessable at any rate, and throttling by address would refuse valid
 * calls that share an address (a proxy, an office), so its hot path does not even pass here.
 *
 * The address is the client's as Fastify reads it (`request.ip`, which honours `SLUICE_TRUST_PROXY`);
 * IPv6 addresses count per /64, the block one host is usually given. Counts are per process, kept in
 * memory for at most `MAX_TRACKED` addresses.
 */
import { HttpError } from '../lib/errors.ts'

/** The default number of failures an address may make in a window. */
export const DEFAULT_FAILURES_PER_WINDOW = 20
/** The window, from an address's first failure. */
export const WINDOW_MS = 60_000
/** Addresses tracked at once; past it, ended windows are dropped first, then the oldest. */
const MAX_TRACKED = 100_000

interface Window {
  startedAt: number
  failures: number
}

export class AuthThrottle {
  private readonly limit: number
  private readonly now: () => number
  private readonly windows = new Map<string, Window>()

  /** `failuresPerWindow` 0 turns throttling off. `now` is for tests. */
  constructor(options: { failuresPerWindow: number; now?: () => number }) {
    this.limit = options.failuresPerWindow
    this.now = options.now ?? Date.now
  }

  /** Throws a 429 HttpError (with `retryAfterSeconds`) while `address` is locked out. */
  check(address: string): void {
    if (this.limit === 0) return
    const window = this.current(clientKey(address))
    if (window === undefined || window.failures < this.limit) return
    const retryAfterSeconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - this.now()) / 1000))
    const error = new HttpError(
      429,
      'too_many_failures',
      `${this.limit} attempts to authenticate from this address failed within a minute, so Sluice refuses every attempt from it for ${retryAfterSeconds} more seconds. Then check the token you send: the admin token (SLUICE_ADMIN_TOKEN, or the one Sluice printed at its first start) or an access token made with POST /api/v1/tokens.`,
    )
    error.retryAfterSeconds = retryAfterSeconds
    throw error
  }

  /** Counts a failed attempt from `address`. */
  failed(address: string): void {
    if (this.limit === 0) return
    const key = clientKey(address)
    const window = this.current(key)
    if (window !== undefined) {
      window.failures++
      return
    }
    if (this.windows.size >= MAX_TRACKED) this.makeRoom()
    this.windows.set(key, { startedAt: this.now(), failures: 1 })
  }

  /** The address's window, unless it has ended (then it is forgotten). */
  private current(key: string): Window | undefined {
    const window = this.windows.get(key)
    if (window !== undefined && this.now() - window.startedAt >= WINDOW_MS) {
      this.windows.delete(key)
      return undefined
    }
    return window
  }

  private makeRoom(): void {
    const now = this.now()
    for (const [key, window] of this.windows) {
      if (now - window.startedAt >= WINDOW_MS) this.windows.delete(key)
    }
    // Still full: windows were made in time order, so the first ones are the oldest.
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED) break
      this.windows.delete(key)
    }
  }
}

/** The key an address is counted under: IPv4 as it is (also when IPv4-mapped), IPv6 by its /64. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  if (!address.includes(':')) return address
  const [head = '', tail] = address.toLowerCase().split('::', 2)
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups =
    tail === undefined
      ? headGroups
      : [
          ...headGroups,
          ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'),
          ...tailGroups,
        ]
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
