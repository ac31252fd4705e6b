/**
 * The computed-trait form's model: the form's inputs as typed, and the body the API takes from them.
 * Plain TypeScript without React or the DOM: unit-tested under Node (packages/web/test).
 */
import type { ComputedTraitKind, CreateComputedTraitBody } from '@sluice/server/api'
import { toWhere, type WhereDraft } from './audience-draft.ts'

export interface ComputedTraitDraft {
  name: string
  kind: ComputedTraitKind
  event: string
  /** Read by every kind but `count`. */
  property: string
  where: WhereDraft[]
  /** Empty: all history. */
  withinDays: string
  destinationIds: string[]
}

export const emptyComputedTrait = (): ComputedTraitDraft => ({
  name: '',
  kind: 'count',
  event: '',
  property: '',
  where: [],
  withinDays: '',
  destinationIds: [],
})

/** Whether the kind reads a property of the calls (every kind but `count`). */
export const readsProperty = (kind: ComputedTraitKind): boolean => kind !== 'count'

/** The body of POST /computed-traits: empty inputs are left out, for the API's defaults. */
export function toComputedTraitBody(draft: ComputedTraitDraft): CreateComputedTraitBody {
  const property = draft.property.trim()
  return {
    name: draft.name,
    kind: draft.kind,
    event: draft.event.trim(),
    ...(!readsProperty(draft.kind) || property === '' ? {} : { property }),
    ...(draft.where.length === 0 ? {} : { where: toWhere(draft.where) }),
    ...(draft.withinDays.trim() === '' ? {} : { withinDays: Number(draft.withinDays) }),
    destinationIds: draft.destinationIds,
  }
}
