/**
 * The web app's sign-in: `POST /session` trades a token for an HttpOnly, SameSite=Strict session
 * cookie, `GET /session` says who is signed in, `DELETE /session` signs out.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../lib/errors.ts'
import { type AccessControl, type Principal, SESSION_MS } from './access-control.ts'
import { currentSessionSchema, signInSchema, signOutSchema } from './access-schemas.ts'
import { readCookie, requireAccess, SESSION_COOKIE } from './auth.ts'

function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  value: string,
  maxAgeSeconds: number,
) {
  // Secure whenever the browser reached Sluice over HTTPS (directly or through a trusted proxy).
  const secure = request.protocol === 'https' ? '; Secure' : ''
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`,
  )
}

const sessionView = ({ role, name }: Principal) => ({ role, name })

export const sessionEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { access: AccessControl }
}> = async (app, { access }) => {
  app.post('/session', { schema: signInSchema }, async (request, reply) => {
    access.throttle.check(request.ip)
    const principal = await access.identify(request.body.token.trim())
    if (!principal) {
      access.throttle.failed(request.ip)
      throw new HttpError(
        401,
        'unauthorized',
        'This access token is not valid: it is mistyped, or it was revoked. Use the admin token or a token an admin created for you.',
        '/token',
      )
    }
    setSessionCookie(request, reply, access.openSession(principal), SESSION_MS / 1000)
    return sessionView(principal)
  })

  app.get('/session', { schema: currentSessionSchema, onRequest: requireAccess(access) }, async (request) =>
    sessionView(request.principal!),
  )

  app.delete('/session', { schema: signOutSchema }, async (request, reply) => {
    const cookie = readCookie(request, SESSION_COOKIE)
    if (cookie !== undefined) await access.endSession(cookie)
    setSessionCookie(request, reply, '', 0)
    return reply.code(204).send(null)
  })
}
