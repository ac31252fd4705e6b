/**
 * Admin-token authentication for the management API: `Authorization: Bearer <admin token>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../lib/errors.ts'

const HOW_TO_AUTHENTICATE =
  'Send "Authorization: Bearer <admin token>" with the admin token Sluice printed at its first start ' +
  '(kept in its data directory) or the value of SLUICE_ADMIN_TOKEN.'

/** True when `presented` equals `expected`. Hashing both first makes the comparison constant-time and keeps the token's length from leaking. */
export function isAdminToken(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest()
  return timingSafeEqual(digest(presented), digest(expected))
}

/** An `onRequest` hook that answers 401 unless the request carries the admin token. */
export function requireAdminToken(adminToken: string) {
  if (adminToken === '') throw new Error('The admin token must not be empty.')
  return async function checkAdminToken(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    if (match?.[1] === undefined) {
      reply.header('www-authenticate', 'Bearer realm="sluice"')
      const problem =
        header === undefined ? 'No admin token was sent.' : 'The Authorization header is not a Bearer token.'
      throw new HttpError(401, 'unauthorized', `${problem} ${HOW_TO_AUTHENTICATE}`)
    }
    if (!isAdminToken(match[1], adminToken)) {
      reply.header('www-authenticate', 'Bearer realm="sluice", error="invalid_token"')
      throw new HttpError(401, 'unauthorized', `The admin token is wrong. ${HOW_TO_AUTHENTICATE}`)
    }
  }
}
