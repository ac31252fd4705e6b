/**
 * The web app (packages/web, built into its `dist/` by `npm install`), served at `/` by the API
 * processes. API paths keep priority: static files only answer what no route claims, and any other GET
 * that a browser navigates to (it accepts HTML, outside `/api/` and `/v1/`) gets the app's index.html,
 * whose router shows the page.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** Where the build of packages/web lands. */
export const WEB_APP_DIR = resolve(import.meta.dirname, '../../../web/dist')

/** The app's pages may not be framed by other sites (clickjacking); scripts and styles come from Sluice only. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-cache',
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Sluice</title>
<p>The Sluice web app is not built in this checkout. Run <code>npm install</code> (or <code>npm run build</code>) at the repository root, then restart Sluice. The APIs work without it.</p>`

export async function registerWebApp(app: FastifyInstance, dir = WEB_APP_DIR): Promise<void> {
  if (!existsSync(join(dir, 'index.html'))) {
    app.get('/', { schema: { hide: true } }, (_request, reply) =>
      reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(NOT_BUILT),
    )
    return
  }
  await app.register(fastifyStatic, {
    root: dir,
    index: false,
    // One route per built file, not a catch-all: unknown paths (and paths the router refuses, such as
    // an over-long id) keep the API's own answers; browsers' page paths are served by the not-found
    // handler (isAppNavigation).
    wildcard: false,
    setHeaders(response, path) {
      // Vite names assets by content hash: they never change under the same name.
      if (path.includes(`${join(dir, 'assets')}`)) {
        response.header('cache-control', 'public, max-age=31536000, immutable')
      }
    },
  })
  app.get('/', { schema: { hide: true } }, (_request, reply) => sendAppShell(reply))
}

/** True for a browser navigating to one of the app's pages (not an API call, not a missing asset). */
export function isAppNavigation(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false
  const path = request.url.split('?')[0] ?? ''
  if (path.startsWith('/api/') || path.startsWith('/v1/') || path.startsWith('/assets/')) return false
  return (request.headers.accept ?? '').includes('text/html')
}

export function sendAppShell(reply: FastifyReply): FastifyReply {
  return reply.headers(PAGE_HEADERS).sendFile('index.html')
}
