/**
 * The live debugger's feed: every call the Tracking API judged, as it happens, for whoever watches its
 * source (the web app, over Server-Sent Events). Nothing is kept: a call nobody watches costs one map
 * lookup. The feed is per process; with several API processes, a watcher sees the calls that reached
 * the process serving its stream.
 */
import type { AcceptResult } from './pipeline.ts'

export interface LiveCall {
  /** When the call was judged, ISO 8601. */
  at: string
  status: 'accepted' | 'rejected'
  /** Why it was rejected, in the words the Tracking API answered with. */
  reason: string | null
  /** The call as sent (before enrichment); a `writeKey` member is left out. */
  call: unknown
}

export type LiveCallListener = (calls: LiveCall[]) => void

export class LiveCalls {
  private readonly watchers = new Map<string, Set<LiveCallListener>>()

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

  /** The Tracking API judged `calls` (in request order) for `sourceId` with this result. */
  judged(sourceId: string, calls: readonly unknown[], result: AcceptResult): void {
    const listeners = this.watchers.get(sourceId)
    if (!listeners) return
    const at = new Date().toISOString()
    const reasons = new Map(result.rejected.map((rejection) => [rejection.index, rejection.error]))
    // A suppressed user's calls are acknowledged but must leave no trace, here included.
    const hidden = new Set(result.suppressed)
    const live: LiveCall[] = []
    calls.forEach((call, index) => {
      if (hidden.has(index)) return
      live.push({
        at,
        status: reasons.has(index) ? 'rejected' : 'accepted',
        reason: reasons.get(index) ?? null,
        call: withoutWriteKey(call),
      })
    })
    if (live.length > 0) for (const listener of listeners) listener(live)
  }
}

function withoutWriteKey(call: unknown): unknown {
  if (call === null || typeof call !== 'object' || Array.isArray(call) || !('writeKey' in call)) return call
  const { writeKey: _writeKey, ...rest } = call as Record<string, unknown>
  return rest
}
