/**
 * What an operational event says, in the web app's words. Plain TypeScript: unit-tested under Node
 * (packages/web/test).
 */
import type { Notice } from '@sluice/server/api'

/** One sentence for a notice. */
export function noticeWords(notice: Notice): string {
  const { data } = notice
  const url = data.url ?? 'A URL'
  switch (notice.type) {
    case 'destination.url.failing':
      return `${url} keeps failing: ${data.consecutiveFailures ?? 20} requests in a row (${data.lastError ?? 'no answer'}).`
    case 'destination.url.disabled':
      return `${url} was disabled. ${data.reason ?? ''}`
    case 'destination.url.recovered':
      return `${url} answers again.`
    case 'delivery.dead_lettered': {
      const count = data.count ?? 0
      return count === 1
        ? '1 delivery dead-lettered: its retry window ended. Replay it once the endpoint works.'
        : `${count.toLocaleString()} deliveries dead-lettered: their retry window ended. Replay them once the endpoint works.`
    }
    case 'regulation.finished':
      return `Privacy request ${data.regulationId ?? ''} ${REGULATION_OUTCOMES[String(data.status)] ?? 'finished'}.`
  }
}

/** How a privacy request ended, by its final status. */
const REGULATION_OUTCOMES: Record<string, string> = {
  FINISHED: 'finished',
  PARTIAL_SUCCESS: 'partly failed: some delete notifications to destinations were dead-lettered',
  FAILED: 'failed: its delete notifications to destinations were dead-lettered',
}

/** How the alert of a notice went, when one was wanted. */
export function alertWords(notice: Notice): string | null {
  switch (notice.alertStatus) {
    case 'none':
      return null
    case 'pending':
      return notice.alertAttempts > 0
        ? `Alert not sent yet (${notice.alertError ?? 'retrying'})`
        : 'Alert pending'
    case 'delivered':
      return 'Alert sent'
    case 'failed':
      return `Alert failed: ${notice.alertError ?? 'unknown error'}`
  }
}
