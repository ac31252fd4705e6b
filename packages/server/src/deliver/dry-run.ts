/**
 * The dry run: what a destination's subscription, filters and mapping would do to the most recent
 * stored calls of its sources, before the settings are saved. Nothing is sent and nothing is stored;
 * the same code decides as routing (route/gates.ts) and builds the same bodies as delivery (fan-out.ts).
 */
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { WebhooksSettings } from '../domain/destinations.ts'
import { ValidationError } from '../domain/errors.ts'
import { requireDestination } from '../domain/lookups.ts'
import type { MessageStore } from '../domain/message-store.ts'
import type { SourceStore } from '../domain/source-store.ts'
import { validateWebhooksSettings } from '../domain/webhook-settings.ts'
import { gateOf, passGate } from '../route/gates.ts'
import { deliveredBody } from './fan-out.ts'

export const DRY_RUN_LIMITS = { defaultCalls: 1_000, maxCalls: 10_000, samples: 20 } as const

export interface DryRunRequest {
  sourceIds: string[]
  settings: WebhooksSettings
  /** How many of the most recent calls to run over. Default 1,000, at most 10,000. */
  limit?: number
  /** Only calls received at or after this time (epoch ms). Default: any. */
  from?: number
  /** Only calls received before this time (epoch ms). Default: now. */
  to?: number
}

export interface DryRunSample {
  messageId: string
  /** The body that would be sent; absent when building it failed (see `error`). */
  body?: unknown
  /** Why the body could not be built (a mapping that fails on this call): the delivery would fail. */
  error?: string
}

export interface DryRunResult {
  scanned: number
  matched: number
  filtered: number
  sampledOut: number
  /** Matched calls whose body could not be built: each would fail its delivery. */
  failed: number
  /** The first matched calls (newest first), up to 20. */
  samples: DryRunSample[]
}

export async function dryRun(store: MessageStore, request: DryRunRequest): Promise<DryRunResult> {
  const limit = Math.min(request.limit ?? DRY_RUN_LIMITS.defaultCalls, DRY_RUN_LIMITS.maxCalls)
  const calls = await store.recentMessages(
    request.sourceIds,
    limit,
    request.from ?? 0,
    request.to ?? Date.now() + 1,
  )
  const gate = gateOf(request.settings)
  const result: DryRunResult = {
    scanned: calls.length,
    matched: 0,
    filtered: 0,
    sampledOut: 0,
    failed: 0,
    samples: [],
  }
  for (const call of calls) {
    if (gate !== null) {
      const verdict = passGate(gate, call.payload).verdict
      if (verdict === 'filtered') {
        result.filtered++
        continue
      }
      if (verdict === 'sampledOut') {
        result.sampledOut++
        continue
      }
    }
    result.matched++
    const wanted = result.samples.length < DRY_RUN_LIMITS.samples
    try {
      const body = deliveredBody(call.payload, request.settings)
      if (wanted) result.samples.push({ messageId: call.messageId, body: JSON.parse(body.toString('utf8')) })
    } catch (error) {
      result.failed++
      const reason = error instanceof Error ? error.message : String(error)
      if (wanted) result.samples.push({ messageId: call.messageId, error: reason })
    }
  }
  return result
}

/** The dry run's window and size, as a request gives them. */
export interface DryRunWindow {
  limit?: number
  /** ISO 8601 or epoch ms. */
  from?: string | number
  to?: string | number
}

/** The dry run for callers: unsaved settings over chosen sources, or a saved destination's. */
export class DryRunService {
  readonly #store: MessageStore & DeliveryStore & SourceStore

  constructor(store: MessageStore & DeliveryStore & SourceStore) {
    this.#store = store
  }

  /** `settings` as a request gives them: checked like a destination's, `webhooks` not required. */
  async run(input: { sourceIds: string[]; settings: unknown } & DryRunWindow): Promise<DryRunResult> {
    const settings = validateWebhooksSettings(input.settings, { webhooks: [], sharedSecret: null })
    for (const [index, id] of input.sourceIds.entries()) {
      if ((await this.#store.getSource(id)) === null) {
        throw new ValidationError(
          `/sourceIds/${index}`,
          `sourceIds[${index}]: no source has id "${id}". Use the id of an existing source (GET /api/v1/sources).`,
        )
      }
    }
    return dryRun(this.#store, { sourceIds: input.sourceIds, settings, ...window(input) })
  }

  async runSaved(destinationId: string, input: DryRunWindow): Promise<DryRunResult> {
    const destination = await requireDestination(this.#store, destinationId)
    return dryRun(this.#store, {
      sourceIds: destination.sourceIds,
      settings: destination.settings,
      ...window(input),
    })
  }
}

function window(input: DryRunWindow): Pick<DryRunRequest, 'limit' | 'from' | 'to'> {
  const result: Pick<DryRunRequest, 'limit' | 'from' | 'to'> = {}
  if (input.limit !== undefined) {
    if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > DRY_RUN_LIMITS.maxCalls) {
      throw new ValidationError(
        '/limit',
        `limit must be a whole number from 1 to ${DRY_RUN_LIMITS.maxCalls}.`,
      )
    }
    result.limit = input.limit
  }
  if (input.from !== undefined) result.from = instant(input.from, '/from')
  if (input.to !== undefined) result.to = instant(input.to, '/to')
  return result
}

function instant(value: string | number, field: string): number {
  const time = typeof value === 'number' ? value : Date.parse(value)
  if (!Number.isFinite(time)) {
    throw new ValidationError(
      field,
      `${field.slice(1)} must be a time: ISO 8601 (2026-01-31T12:00:00Z) or epoch milliseconds.`,
    )
  }
  return time
}
