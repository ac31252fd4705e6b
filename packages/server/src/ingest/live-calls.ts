/**
 * The live debugger's feed: every call the Tracking API judged, as it happens, for whoever watches its
 * source (the web app, over Server-Sent Events), and each source's most recent calls, so that a page
 * opened (or reloaded) now shows what arrived just before. The recent calls live in this process's
 * memory only: a restart empties them, and with several API processes each keeps the calls it judged.
 */
import { MAX_MESSAGE_BYTES } from './limits.ts'
import type { AcceptResult } from './pipeline.ts'

/** How many of a source's most recent calls are kept for a debugger opened later. */
export const LIVE_HISTORY_SIZE = 100

export interface LiveCall {
  /** When the call was judged, ISO 8601. */
  at: string
  status: 'accepted' | 'rejected'
  /** Why it was rejected, in the words the Tracking API answered with. */
  reason: string | null
  /**
   * The call's type: its `type` member, else the endpoint's (`/v1/track` takes calls without one);
   * null when neither says (a batch item without `type`, rejected for that).
   */
  type: string | null
  /** The call as sent (before enrichment); a `writeKey` member is left out. */
  call: unknown
}

export type LiveCallListener = (calls: LiveCall[]) => void

export class LiveCalls {
  private readonly watchers = new Map<string, Set<LiveCallListener>>()
  private readonly recent = new Map<string, LiveCall[]>()

  /** Hears every call judged for `sourceId` from now on; returns a function that stops. */
  watch(sourceId: string, listener: LiveCallListener): () => void {
    let set = this.watchers.get(sourceId)
    if (!set) {
      set = new Set()
      this.watchers.set(sourceId, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0) this.watchers.delete(sourceId)
    }
  }

  /** The source's last `LIVE_HISTORY_SIZE` calls judged by this process, oldest first. */
  history(sourceId: string): LiveCall[] {
    return [...(this.recent.get(sourceId) ?? [])]
  }

  /** A deleted source's calls are gone. */
  forgetSource(sourceId: string): void {
    this.recent.delete(sourceId)
  }

  /** An erased user's calls are gone from every source's recent calls. */
  forgetUsers(userIds: readonly string[]): void {
    const erased = new Set(userIds)
    for (const [sourceId, calls] of this.recent) {
      this.recent.set(
        sourceId,
        calls.filter((live) => !mentionsAny(live.call, erased)),
      )
    }
  }

  /**
   * The Tracking API judged `calls` (in request order) for `sourceId` with this result; `endpointType`
   * is the type the endpoint gives calls without one (`/v1/track`: track).
   */
  judged(sourceId: string, calls: readonly unknown[], result: AcceptResult, endpointType?: string): void {
    const at = new Date().toISOString()
    const reasons = new Map(result.rejected.map((rejection) => [rejection.index, rejection.error]))
    // A suppressed user's calls are acknowledged but must leave no trace, here included.
    const hidden = new Set(result.suppressed)
    const live: LiveCall[] = []
    calls.forEach((call, index) => {
      if (hidden.has(index)) return
      const rejected = reasons.has(index)
      live.push({
        at,
        status: rejected ? 'rejected' : 'accepted',
        reason: reasons.get(index) ?? null,
        type: typeOf(call) ?? endpointType ?? null,
        // Accepted calls are within the size limit; a rejected one may be far larger (up to a whole
        // request), and is kept and shown only as a note, so that the recent calls stay small.
        call: rejected && tooLargeToShow(call) ? TOO_LARGE : withoutWriteKey(call),
      })
    })
    if (live.length === 0) return
    const kept = [...(this.recent.get(sourceId) ?? []), ...live]
    this.recent.set(sourceId, kept.slice(-LIVE_HISTORY_SIZE))
    const listeners = this.watchers.get(sourceId)
    if (listeners) for (const listener of listeners) listener(live)
  }
}

const TOO_LARGE = { note: `This call is larger than ${MAX_MESSAGE_BYTES / 1024} KB and is not shown.` }

function tooLargeToShow(call: unknown): boolean {
  try {
    return Buffer.byteLength(JSON.stringify(call) ?? '') > MAX_MESSAGE_BYTES
  } catch {
    // Nested too deep to serialize (rejected for it): too large to show as well.
    return true
  }
}

function typeOf(call: unknown): string | undefined {
  if (call === null || typeof call !== 'object') return undefined
  const type = (call as Record<string, unknown>).type
  return typeof type === 'string' && type !== '' ? type : undefined
}

/** Whether the call names one of `userIds` as its user (or, in an alias, as the previous id). */
function mentionsAny(call: unknown, userIds: Set<string>): boolean {
  if (call === null || typeof call !== 'object') return false
  const { userId, previousId } = call as Record<string, unknown>
  return userIds.has(String(userId)) || userIds.has(String(previousId))
}

function withoutWriteKey(call: unknown): unknown {
  if (call === null || typeof call !== 'object' || Array.isArray(call) || !('writeKey' in call)) return call
  const { writeKey: _writeKey, ...rest } = call as Record<string, unknown>
  return rest
}
