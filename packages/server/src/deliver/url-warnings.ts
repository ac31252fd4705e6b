/**
 * Save-time warnings for webhook URLs Sluice will refuse to dial (loopback, private, link-local, cloud
 * metadata…; see ssrf.ts). Saving is not refused: the host may resolve differently later, and
 * SLUICE_ALLOW_PRIVATE_DESTINATIONS may change. But a user learns now, next to the field, rather than
 * from failed deliveries later. Resolution is bounded; a host that does not resolve in time gets no
 * warning (delivery reports it).
 */
import type { WebhookEndpoint } from '../domain/destinations.ts'
import { guardedResolve, type Resolver, SsrfRefusedError, systemResolver } from './ssrf.ts'

/** How long a save waits for each host to resolve. */
const RESOLVE_TIMEOUT_MS = 1_500

/** A type, not an interface, so that it fits the response schema's open object type. */
export type FieldWarning = {
  /** JSON pointer of the URL, e.g. `/settings/webhooks/0/url`. */
  field: string
  message: string
}

export async function unreachableUrlWarnings(
  webhooks: readonly WebhookEndpoint[],
  options: { allowPrivate: boolean; resolve?: Resolver },
): Promise<FieldWarning[]> {
  if (options.allowPrivate) return []
  const resolve = options.resolve ?? systemResolver
  const checks = webhooks.map(async ({ url }, index): Promise<FieldWarning | null> => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<null>((done) => {
      timer = setTimeout(() => done(null), RESOLVE_TIMEOUT_MS)
    })
    try {
      const hostname = new URL(url).hostname
      await Promise.race([guardedResolve(hostname, false, resolve), timeout])
      return null
    } catch (error) {
      if (!(error instanceof SsrfRefusedError)) return null
      return {
        field: `/settings/webhooks/${index}/url`,
        message: `Saved, but Sluice will refuse to deliver to this URL: ${error.message}`,
      }
    } finally {
      clearTimeout(timer)
    }
  })
  return (await Promise.all(checks)).filter((warning) => warning !== null)
}
