/**
 * The regulations in force, held in memory for the hot paths: the Tracking API asks whether a call's
 * user is suppressed (two Set lookups), and the delivery engine asks, just before sending, whether a
 * claimed delivery's message was erased by a deletion request since it was claimed.
 *
 * Kept fresh from the store: reloaded on every `privacy` change the store announces (this process's
 * at once, before the writing call returns; other PostgreSQL processes' by NOTIFY) and, as a backstop
 * for a lost notification, every `refreshMs`.
 */

import type { ClaimedDelivery } from '../domain/delivery-store.ts'
import { type ErasureScope, erasureCovers, type PrivacyStore } from '../domain/privacy-store.ts'
import type { Logger } from '../lib/logger.ts'
import type { StoreWatch } from '../store/store.ts'

export interface PrivacyFilterOptions {
  /** Reload at least this often, whatever was announced. Default 2 s (within the 5 s promise). */
  refreshMs?: number
  /**
   * How far back deletion requests are checked against claimed deliveries. A claim lives for at most
   * its lease; default 1 h leaves a wide margin.
   */
  erasureLookbackMs?: number
}

/** The user a call is about, as stored: a non-blank string id (numbers are ids too), else null. */
export function subjectId(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : null
}

const sourceKey = (sourceId: string, userId: string): string => `${sourceId}\u0000${userId}`

export class PrivacyFilter {
  private readonly store: PrivacyStore & StoreWatch
  private readonly logger: Logger
  private readonly refreshMs: number
  private readonly erasureLookbackMs: number
  private everywhere = new Set<string>()
  private inSource = new Set<string>()
  private erasures = new Map<string, ErasureScope[]>()
  private loading: Promise<void> | null = null
  private loadAgain = false
  /** The store's privacyVersion when the rules were last loaded. */
  private version: string | null = null
  private timer: NodeJS.Timeout | undefined
  private unwatch: (() => Promise<void>) | undefined

  constructor(store: PrivacyStore & StoreWatch, logger: Logger, options: PrivacyFilterOptions = {}) {
    this.store = store
    this.logger = logger
    this.refreshMs = options.refreshMs ?? 2_000
    this.erasureLookbackMs = options.erasureLookbackMs ?? 3_600_000
  }

  /** Loads the regulations in force and keeps them fresh until `stop`. */
  async start(): Promise<void> {
    this.unwatch = await this.store.watch((event) => {
      if (event === 'privacy') void this.refresh()
    })
    await this.refresh()
    this.timer = setInterval(() => void this.refresh(), this.refreshMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.unwatch?.()
    await this.loading
  }

  /** Reloads from the store; calls during a load coalesce into one more load after it. */
  refresh(): Promise<void> {
    if (this.loading) {
      this.loadAgain = true
      return this.loading
    }
    this.loading = (async () => {
      do {
        this.loadAgain = false
        try {
          await this.load()
        } catch (error) {
          // The previous rules stay in force; the next refresh tries again.
          this.logger.warn({ err: error }, 'privacy: reloading suppressions failed; keeping the last ones')
        }
      } while (this.loadAgain)
    })().finally(() => {
      this.loading = null
    })
    return this.loading
  }

  private async load(): Promise<void> {
    // Cheap when nothing changed: with 100,000 suppressions a reload is a large read, so the periodic
    // backstop only asks whether anything changed.
    const version = await this.store.privacyVersion()
    if (version === this.version) return
    const [suppressions, erasures] = await Promise.all([
      this.store.listSuppressions(),
      this.store.recentErasures(Date.now() - this.erasureLookbackMs),
    ])
    const everywhere = new Set<string>()
    const inSource = new Set<string>()
    for (const { userId, sourceId } of suppressions) {
      if (sourceId === null) everywhere.add(userId)
      else inSource.add(sourceKey(sourceId, userId))
    }
    const byUser = new Map<string, ErasureScope[]>()
    for (const erasure of erasures) {
      for (const userId of erasure.userIds) {
        const list = byUser.get(userId) ?? []
        list.push(erasure)
        byUser.set(userId, list)
      }
    }
    this.everywhere = everywhere
    this.inSource = inSource
    this.erasures = byUser
    this.version = version
  }

  /** Whether a call of `sourceId` naming these users (userId, and an alias's previousId) is suppressed. */
  isSuppressed(sourceId: string, userId: string | null, previousId: string | null): boolean {
    if (this.everywhere.size === 0 && this.inSource.size === 0) return false
    return this.suppresses(sourceId, userId) || this.suppresses(sourceId, previousId)
  }

  private suppresses(sourceId: string, id: string | null): boolean {
    if (id === null) return false
    return this.everywhere.has(id) || (this.inSource.size > 0 && this.inSource.has(sourceKey(sourceId, id)))
  }

  /** Whether a deletion request erased this delivery's message (it must then never be sent). */
  isErased(delivery: ClaimedDelivery): boolean {
    if (this.erasures.size === 0 || delivery.payload.type === 'delete') return false
    for (const field of ['userId', 'previousId']) {
      const id = subjectId(delivery.payload[field])
      if (id === null) continue
      for (const erasure of this.erasures.get(id) ?? []) {
        if (erasureCovers(erasure, delivery.sourceId, delivery.receivedAt)) return true
      }
    }
    return false
  }
}
