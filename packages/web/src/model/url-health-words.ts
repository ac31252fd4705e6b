/**
 * What a URL's health says, in a sentence a person reads: "3 failures in a row · 40% succeeded in the
 * last hour". Plain TypeScript: unit-tested under Node (packages/web/test).
 */
import type { EndpointHealth } from '@sluice/server/api'

/**
 * A share as a whole percent that never overstates or hides a failure: 99.6% reads 99%, not 100%;
 * 0.4% reads "under 1%", not 0%.
 */
export function percentWords(share: number): string {
  if (share >= 1) return '100%'
  if (share <= 0) return '0%'
  if (share < 0.01) return 'under 1%'
  return `${Math.min(99, Math.round(share * 100))}%`
}

const plural = (count: number, noun: string) => `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`

/**
 * The figures beside a URL's state badge; the parts are joined with " · ". A disabled URL says that it
 * gets nothing (its reason and the Enable button are shown beside it).
 */
export function urlHealthWords(
  health: Pick<EndpointHealth, 'state' | 'consecutiveFailures' | 'successRate1h' | 'lastSuccessAt'>,
): string {
  if (health.state === 'disabled') return 'Gets no requests until it is enabled.'
  const lastHour =
    health.successRate1h === null
      ? health.state === 'healthy' && health.lastSuccessAt === null
        ? 'no requests yet'
        : 'no requests in the last hour'
      : `${percentWords(health.successRate1h)} succeeded in the last hour`
  const parts =
    health.state === 'failing' && health.consecutiveFailures > 0
      ? [`${plural(health.consecutiveFailures, 'failure')} in a row`, lastHour]
      : [lastHour]
  const sentence = parts.join(' · ')
  return sentence.charAt(0).toUpperCase() + sentence.slice(1)
}
