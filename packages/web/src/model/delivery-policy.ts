/**
 * What a destination gets, as the destination form edits it: the subscription, the filters, the
 * mapping (as JSON text) and the method; `toPolicySettings` makes the settings the API takes. Plain
 * TypeScript without React or the DOM: unit-tested under Node (packages/web/test).
 */
import type { DeliveryPolicySettings, FilterAction, WebhookMethod } from '@sluice/server/api'

/** What each filter action does, in the form's words. */
export const FILTER_ACTION_LABELS: Record<FilterAction, string> = {
  drop: 'Drop the call',
  sample: 'Keep a share (sample)',
  dropFields: 'Remove fields',
  allowFields: 'Keep only fields',
}

/** One filter as typed: the percent and the fields as text. */
export interface FilterDraft {
  if: string
  action: FilterAction
  percent: string
  /** Dot paths, comma-separated. */
  fields: string
}

export interface PolicyDraft {
  subscription: string
  filters: FilterDraft[]
  /** The mapping's JSON, as typed; empty: none. */
  mapping: string
  method: WebhookMethod
  batching: BatchingDraft
}

/** Batching as typed: off, or its three limits as text (the API says what is out of range). */
export interface BatchingDraft {
  on: boolean
  maxEvents: string
  maxBytes: string
  maxWaitMs: string
}

/** Batching as saved (the API's `settings.batching`). */
interface SavedBatching {
  maxEvents: number
  maxBytes: number
  maxWaitMs: number
}

export const emptyFilter = (): FilterDraft => ({ if: '', action: 'drop', percent: '50', fields: '' })

/** The saved settings as the form shows them. */
export function policyDraft(
  settings: (DeliveryPolicySettings & { batching?: SavedBatching }) | undefined,
): PolicyDraft {
  const batching = settings?.batching
  return {
    subscription: settings?.subscription ?? '',
    filters: (settings?.filters ?? []).map((filter) => ({
      if: filter.if ?? '',
      action: filter.action,
      percent: filter.percent === undefined ? '50' : String(filter.percent),
      fields: (filter.fields ?? []).join(', '),
    })),
    mapping: settings?.mapping ? JSON.stringify(settings.mapping, null, 2) : '',
    method: settings?.method ?? 'POST',
    // Off: the example limits the API's own error message gives, ready when it is turned on.
    batching: {
      on: batching !== undefined,
      maxEvents: String(batching?.maxEvents ?? 100),
      maxBytes: String(batching?.maxBytes ?? 512_000),
      maxWaitMs: String(batching?.maxWaitMs ?? 1_000),
    },
  }
}

/** The mapping text that is not JSON: why, to be shown at the field before anything is sent. */
export function mappingProblem(text: string): string | null {
  if (text.trim() === '') return null
  try {
    const parsed: unknown = JSON.parse(text)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? null
      : 'Mapping must be a JSON object, e.g. {"name": {"@path": "$.event"}}.'
  } catch (error) {
    return `Mapping is not valid JSON: ${(error as Error).message}`
  }
}

/** A number as typed: a number when it is one, else the text, for the API to point at. */
function numberOf(text: string): number {
  const trimmed = text.trim()
  return (trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed) as number
}

/**
 * The settings the API takes. A new destination sends only what is set; a saved one sends every
 * member, `null` for those emptied (which removes them). The mapping must parse (see `mappingProblem`).
 */
export function toPolicySettings(draft: PolicyDraft, saved: boolean) {
  const subscription = draft.subscription.trim()
  const filters = draft.filters.map((filter) => ({
    ...(filter.if.trim() === '' ? {} : { if: filter.if.trim() }),
    action: filter.action,
    ...(filter.action === 'sample' ? { percent: numberOf(filter.percent) } : {}),
    ...(filter.action === 'dropFields' || filter.action === 'allowFields'
      ? {
          fields: filter.fields
            .split(',')
            .map((field) => field.trim())
            .filter((field) => field !== ''),
        }
      : {}),
  }))
  const mapping = draft.mapping.trim() === '' ? null : (JSON.parse(draft.mapping) as Record<string, unknown>)
  if (saved) {
    return {
      subscription: subscription === '' ? null : subscription,
      filters: filters.length === 0 ? null : filters,
      mapping,
      method: draft.method,
    }
  }
  return {
    ...(subscription === '' ? {} : { subscription }),
    ...(filters.length === 0 ? {} : { filters }),
    ...(mapping === null ? {} : { mapping }),
    ...(draft.method === 'POST' ? {} : { method: draft.method }),
  }
}

/**
 * `settings.batching` as the API takes it: a new destination sends it only when on; a saved one sends
 * `null` when off (which turns batching off). Kept apart from `toPolicySettings`: the dry run shapes
 * single calls and takes no batching.
 */
export function toBatchingSettings(draft: PolicyDraft, saved: boolean) {
  const { on, maxEvents, maxBytes, maxWaitMs } = draft.batching
  if (!on) return saved ? { batching: null } : {}
  return {
    batching: {
      maxEvents: numberOf(maxEvents),
      maxBytes: numberOf(maxBytes),
      maxWaitMs: numberOf(maxWaitMs),
    },
  }
}
