/**
 * Authentication for the management API: `Authorization: Bearer <token>` (the admin token or an access
 * token) or the web app's session cookie; viewers read only.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../lib/errors.ts'
import type { AccessControl, Principal } from './access-control.ts'

const HOW_TO_AUTHENTICATE =
  'Send "Authorization: Bearer <token>" with the admin token Sluice printed at its first start ' +
  '(kept in its data directory), the value of SLUICE_ADMIN_TOKEN, or an access token made with POST /api/v1/tokens.'

/** The web app's session cookie. */
export const SESSION_COOKIE = 'sluice_session'
/**
 * The header the web app sends on every change it makes with its session cookie. A page on another
 * origin cannot add it without a CORS preflight, which Sluice never grants: with SameSite=Strict and the
 * Origin check, this is the CSRF defence.
 */
export const CSRF_HEADER = 'x-sluice-csrf'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for, once `requireAccess` has let it through. */
    principal: Principal | null
  }
}

/** The value of one cookie in the request, or undefined. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at > 0 && pair.slice(0, at).trim() === name) return decodeURIComponent(pair.slice(at + 1).trim())
  }
  return undefined
}

/** True when the request may be shown secrets (write keys, header values): admins only. */
export function canSeeSecrets(request: FastifyRequest): boolean {
  return request.principal?.role === 'admin'
}

/**
 * Authenticates a request by `Authorization: Bearer <token>` (the admin token or an access token) or by
 * the web app's session cookie, and resolves with who it acts for. Throws a 401 HttpError otherwise.
 * Cookie-borne changes must also pass the CSRF check. This is the one check every protected route uses.
 */
export async function authenticate(access: AccessControl, request: FastifyRequest): Promise<Principal> {
  // An address that failed too often is refused before its credentials are even looked at.
  access.throttle.check(request.ip)
  const header = request.headers.authorization
  if (header !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    if (match?.[1] === undefined) {
      throw new HttpError(
        401,
        'unauthorized',
        `The Authorization header is not a Bearer token. ${HOW_TO_AUTHENTICATE}`,
      )
    }
    const principal = await access.identify(match[1])
    if (!principal) {
      access.throttle.failed(request.ip)
      throw new HttpError(401, 'unauthorized', `The token is wrong or was revoked. ${HOW_TO_AUTHENTICATE}`)
    }
    return principal
  }
  const cookie = readCookie(request, SESSION_COOKIE)
  if (cookie === undefined) {
    throw new HttpError(401, 'unauthorized', `No token was sent. ${HOW_TO_AUTHENTICATE}`)
  }
  const principal = await access.session(cookie)
  if (principal === 'forged') access.throttle.failed(request.ip)
  if (principal === null || principal === 'forged') {
    throw new HttpError(
      401,
      'unauthorized',
      'The session has expired or its token was revoked; sign in again.',
    )
  }
  if (!SAFE_METHODS.has(request.method)) checkSameOrigin(request)
  return principal
}

/** Refuses a cookie-authenticated change that a page on another site could have sent. */
function checkSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin
  if (request.headers[CSRF_HEADER] === undefined || (origin !== undefined && origin !== ownOrigin(request))) {
    throw new HttpError(
      403,
      'csrf_refused',
      `A change made with a session cookie must come from the Sluice web app itself (same origin, with the ${CSRF_HEADER} header). Scripts should send "Authorization: Bearer <token>" instead.`,
    )
  }
}

function ownOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

/**
 * An `onRequest` hook for the management API: authenticates (see `authenticate`), records the principal
 * on the request, and refuses changes from viewer tokens with 403.
 */
export function requireAccess(access: AccessControl) {
  return async function checkAccess(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    try {
      request.principal = await authenticate(access, request)
    } catch (error) {
      if (error instanceof HttpError && error.statusCode === 401) {
        reply.header('www-authenticate', 'Bearer realm="sluice"')
      }
      throw error
    }
    if (request.principal.role !== 'admin' && !SAFE_METHODS.has(request.method)) throw viewerRefused()
  }
}

/** A `preHandler` for routes only admins may even read (the tokens). */
export async function requireAdmin(request: FastifyRequest): Promise<void> {
  if (request.principal?.role !== 'admin') throw viewerRefused()
}

function viewerRefused(): HttpError {
  return new HttpError(
    403,
    'forbidden',
    'This token has the viewer role: it can read but not change anything, and cannot manage tokens. Use an admin token.',
  )
}
