/**
 * Brings unfinished regulations' statuses up to date (domain/regulation-status.ts says what a status
 * is), and freezes each one's outcome once it is final: retention may later remove the notifications
 * its counts come from. The erasure runner does it after every pass; `sluice privacy erase` too.
 * A regulation that finishes makes a `regulation.finished` operational event (once, whichever process
 * settles it).
 */
import type { HealthStore } from '../domain/health-store.ts'
import type { PrivacyStore } from '../domain/privacy-store.ts'
import { regulationProgress } from '../domain/regulation-status.ts'

/** A quiet period no regulation outlives: its event is recorded once. */
const ONCE = 10 * 365 * 86_400_000

/**
 * Returns how many regulations finished now. One whose status cannot be stored holds up none of the
 * others: every other is settled, then the failures are thrown together.
 */
export async function settleRegulations(store: PrivacyStore & HealthStore, now: number): Promise<number> {
  let finished = 0
  const failures: unknown[] = []
  for (const regulation of await store.unfinishedRegulations()) {
    const { status, destinations } = regulationProgress(regulation.notifications, regulation.erasurePending)
    if (status === regulation.status) continue
    const final = status !== 'RUNNING'
    try {
      await store.setRegulationStatus(regulation.id, status, final ? { at: now, destinations } : null)
      if (!final) continue
      finished++
      await store.recordOperationalEvent(
        {
          type: 'regulation.finished',
          subject: regulation.id,
          data: { regulationId: regulation.id, status, destinations },
        },
        now,
        ONCE,
      )
    } catch (error) {
      failures.push(error)
    }
  }
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} regulation statuses not stored`)
  return finished
}
