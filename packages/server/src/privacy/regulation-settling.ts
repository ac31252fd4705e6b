/**
 * Brings unfinished regulations' statuses up to date (domain/regulation-status.ts says what a status
 * is), and freezes each one's outcome once it is final: retention may later remove the notifications
 * its counts come from. The erasure runner does it after every pass; `sluice privacy erase` too.
 */
import type { PrivacyStore } from '../domain/privacy-store.ts'
import { regulationProgress } from '../domain/regulation-status.ts'

/** Returns how many regulations finished now. */
export async function settleRegulations(store: PrivacyStore, now: number): Promise<number> {
  let finished = 0
  for (const regulation of await store.unfinishedRegulations()) {
    const { status, destinations } = regulationProgress(regulation.notifications, regulation.erasurePending)
    if (status === regulation.status) continue
    const final = status !== 'RUNNING'
    await store.setRegulationStatus(regulation.id, status, final ? { at: now, destinations } : null)
    if (final) finished++
  }
  return finished
}
