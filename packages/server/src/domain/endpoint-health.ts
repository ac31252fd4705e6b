/**
 * Endpoint health, per URL of a destination (docs/webhooks.md, "Endpoint health"): read from the
 * URL's shared state (disabled, failing since) and its most recent requests, so the delivery engine
 * writes nothing per successful attempt beyond the attempt it already records.
 *
 * - `disabled`: a `410 Gone`, auto-disabling, or an operator turned it off; it gets no requests.
 * - `failing`: its latest request failed, even when another URL of the destination took the message.
 * - `healthy`: otherwise (also before its first request).
 *
 * The figures come from the destination's newest `HEALTH_SAMPLE` single and batch attempts: a URL that
 * failed more often than that in a row shows that many consecutive failures and no last success.
 */
import type { DeliveryStore } from './delivery-store.ts'
import type { Destination } from './destinations.ts'
import type { AttemptSummary, EndpointState, HealthStore } from './health-store.ts'

export type EndpointHealthState = 'healthy' | 'failing' | 'disabled'

export interface EndpointHealth {
  url: string
  state: EndpointHealthState
  consecutiveFailures: number
  lastSuccessAt: number | null
  lastFailureAt: number | null
  lastError: string | null
  /** Share of its requests in the last hour that got a 2xx, 0 to 1; null when it had none. */
  successRate1h: number | null
  /** When and why it was disabled; null while enabled. */
  disabledAt: number | null
  disabledReason: string | null
}

/** How many of a destination's newest single attempts (and as many batch attempts) health reads. */
export const HEALTH_SAMPLE = 2_000

const HOUR = 3_600_000

/** True when the request got a 2xx. */
export function succeeded(attempt: Pick<AttemptSummary, 'statusCode'>): boolean {
  return attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode <= 299
}

/** What went wrong with a failed request, in a few words. */
export function attemptError(attempt: Pick<AttemptSummary, 'statusCode' | 'errorText'>): string {
  return attempt.errorText ?? (attempt.statusCode === null ? 'no response' : `HTTP ${attempt.statusCode}`)
}

/** The health of each of `urls`, in their order; `attempts` newest first. */
export function endpointHealth(
  urls: readonly string[],
  states: readonly EndpointState[],
  attempts: readonly AttemptSummary[],
  now: number,
): EndpointHealth[] {
  return urls.map((url) => {
    const state = states.find((each) => each.url === url)
    const own = attempts.filter((attempt) => attempt.url === url)
    const lastSuccess = own.find(succeeded)
    const lastFailure = own.find((attempt) => !succeeded(attempt))
    const consecutive = own.findIndex(succeeded)
    const consecutiveFailures = consecutive === -1 ? own.length : consecutive
    const lastHour = own.filter((attempt) => attempt.attemptedAt > now - HOUR)
    const disabledAt = state?.disabledAt ?? null
    return {
      url,
      state: disabledAt !== null ? 'disabled' : consecutiveFailures > 0 ? 'failing' : 'healthy',
      consecutiveFailures,
      lastSuccessAt: lastSuccess?.attemptedAt ?? null,
      lastFailureAt: lastFailure?.attemptedAt ?? null,
      lastError: lastFailure ? attemptError(lastFailure) : null,
      successRate1h: lastHour.length === 0 ? null : lastHour.filter(succeeded).length / lastHour.length,
      disabledAt,
      disabledReason: state?.disabledReason ?? null,
    }
  })
}

/** Each destination's URL health, read from the store (every destination when `destinations` is omitted). */
export async function readEndpointHealth(
  store: DeliveryStore & HealthStore,
  destinations?: readonly Destination[],
  sample = HEALTH_SAMPLE,
): Promise<{ destination: Destination; health: EndpointHealth[] }[]> {
  const [all, states] = await Promise.all([destinations ?? store.listDestinations(), store.endpointStates()])
  const now = Date.now()
  return Promise.all(
    all.map(async (destination) => ({
      destination,
      health: endpointHealth(
        destination.settings.webhooks.map(({ url }) => url),
        states.filter((state) => state.destinationId === destination.id),
        await store.recentAttempts(destination.id, sample),
        now,
      ),
    })),
  )
}
