/**
 * "The store cannot be reached right now" as opposed to "this request is wrong" or "Sluice has a bug".
 * The HTTP layers answer it with 503 and Retry-After: nothing in the request was stored, and the same
 * request is expected to succeed once the database is back (SDKs retry 5xx with the same messageIds,
 * and the dedupe window makes that safe).
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}

/** Socket-level failures on the way to the database. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * PostgreSQL SQLSTATEs that mean the server is going away, restarting or full — never that the
 * statement was wrong. Class 08 (connection exception) is matched by prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown (a restart or fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
])

/** node-postgres reports a lost or never-made connection with these messages (no code). */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
]

export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true
  if (error === null || typeof error !== 'object') return false
  const code = (error as { code?: unknown }).code
  if (
    typeof code === 'string' &&
    (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))
  )
    return true
  const message = (error as { message?: unknown }).message
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.some((text) => message.startsWith(text))
}
