/**
 * The audience definition as a tree of small forms: all/any groups, not, and the leaves (performed event,
 * trait, computed trait, in audience). Each node knows its JSON pointer, so the API's 400 is shown next
 * to the node it points at (e.g. `/definition/all/1/computedTrait`).
 */
import { type ReactNode, useId } from 'react'
import { ApiError, type AudienceNode } from '../api.ts'
import { FieldError } from '../ui.tsx'

export const COUNT_OPERATORS = ['=', '!=', '<', '<=', '>', '>='] as const
export const WHERE_OPERATORS = [
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'contains',
  'starts_with',
  'ends_with',
  'exists',
  'not_exists',
  'in',
] as const

export type Draft =
  | { kind: 'all' | 'any'; children: Draft[] }
  | { kind: 'not'; child: Draft }
  | {
      kind: 'event'
      event: string
      where: WhereDraft[]
      countOp: string
      countValue: string
      withinDays: string
    }
  | { kind: 'trait' | 'computedTrait'; name: string; op: string; value: string }
  | { kind: 'audience'; key: string }

/** One `where` filter as typed: the value is parsed when the definition is built. */
export interface WhereDraft {
  property: string
  op: string
  value: string
}

type Kind = Draft['kind']

const KIND_LABELS: Record<Kind, string> = {
  all: 'All of',
  any: 'Any of',
  not: 'Not',
  event: 'Performed event',
  trait: 'Trait',
  computedTrait: 'Computed trait',
  audience: 'In audience',
}

export function emptyDraft(kind: Kind): Draft {
  switch (kind) {
    case 'all':
    case 'any':
      return { kind, children: [emptyDraft('event')] }
    case 'not':
      return { kind, child: emptyDraft('event') }
    case 'event':
      return { kind, event: '', where: [], countOp: '', countValue: '1', withinDays: '' }
    case 'trait':
    case 'computedTrait':
      return { kind, name: '', op: '=', value: '' }
    default:
      return { kind: 'audience', key: '' }
  }
}

/** A typed value: numbers, true/false and null as such, a comma-separated list for `in`, else text. */
function parseValue(op: string, text: string): unknown {
  if (op === 'exists' || op === 'not_exists') return undefined
  if (op === 'in') return text.split(',').map((part) => parseValue('=', part.trim()))
  const trimmed = text.trim()
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed)
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true'
  if (trimmed === 'null') return null
  return text
}

/** The filters as the API takes them; empty means none. */
export function toWhere(where: WhereDraft[]): { property: string; op: string; value?: unknown }[] {
  return where.map(({ property, op, value }) => {
    const parsed = parseValue(op, value)
    return { property: property.trim(), op, ...(parsed === undefined ? {} : { value: parsed }) }
  })
}

/** Whole numbers stay numbers; anything else is sent as typed, for the API to point at. */
function parseWhole(text: string): unknown {
  const trimmed = text.trim()
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed
}

export function toDefinition(draft: Draft): AudienceNode {
  switch (draft.kind) {
    case 'all':
      return { all: draft.children.map(toDefinition) }
    case 'any':
      return { any: draft.children.map(toDefinition) }
    case 'not':
      return { not: toDefinition(draft.child) }
    case 'event':
      return {
        event: draft.event.trim(),
        ...(draft.where.length === 0 ? {} : { where: toWhere(draft.where) }),
        ...(draft.countOp === ''
          ? {}
          : { count: { op: draft.countOp, value: parseWhole(draft.countValue) } }),
        ...(draft.withinDays.trim() === '' ? {} : { withinDays: parseWhole(draft.withinDays) }),
      } as AudienceNode
    case 'trait':
      return { trait: draft.name.trim(), op: draft.op, value: parseValue(draft.op, draft.value) }
    case 'computedTrait':
      return { computedTrait: draft.name.trim(), op: draft.op, value: parseValue(draft.op, draft.value) }
    default:
      return { audience: draft.key.trim() }
  }
}

function claims(error: unknown, field: string): boolean {
  return error instanceof ApiError && (error.field === field || error.field?.startsWith(`${field}/`) === true)
}

interface NodeProps {
  draft: Draft
  onChange: (draft: Draft) => void
  onRemove?: () => void
  /** JSON pointer of this node, e.g. `/definition/all/0`. */
  at: string
  /** Human number, e.g. `1.2`: part of every label inside the node. */
  label: string
  error: unknown
}

export function NodeEditor({ draft, onChange, onRemove, at, label, error }: NodeProps) {
  const id = useId()
  return (
    <fieldset className={`node node-${draft.kind}${claims(error, at) ? ' node-failed' : ''}`}>
      <legend>Condition {label}</legend>
      <div className="node-head">
        <label htmlFor={`${id}-kind`} className="visually-hidden">
          Type of condition {label}
        </label>
        <select
          id={`${id}-kind`}
          value={draft.kind}
          onChange={(event) => onChange(emptyDraft(event.target.value as Kind))}
        >
          {(Object.keys(KIND_LABELS) as Kind[]).map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
        {onRemove && (
          <button type="button" className="link" aria-label={`Remove condition ${label}`} onClick={onRemove}>
            Remove
          </button>
        )}
      </div>
      <NodeBody draft={draft} onChange={onChange} at={at} label={label} error={error} />
      <FieldError error={error} field={at} exact />
    </fieldset>
  )
}

function NodeBody({ draft, onChange, at, label, error }: NodeProps) {
  switch (draft.kind) {
    case 'all':
    case 'any': {
      const list = `${at}/${draft.kind}`
      return (
        <div className="node-children">
          {draft.children.map((child, index) => (
            <NodeEditor
              // biome-ignore lint/suspicious/noArrayIndexKey: a node's place in its group is its identity (and its pointer).
              key={index}
              draft={child}
              at={`${list}/${index}`}
              label={`${label}.${index + 1}`}
              error={error}
              onChange={(changed) =>
                onChange({ ...draft, children: draft.children.map((c, at) => (at === index ? changed : c)) })
              }
              onRemove={
                draft.children.length > 1
                  ? () => onChange({ ...draft, children: draft.children.filter((_, at) => at !== index) })
                  : undefined
              }
            />
          ))}
          <FieldError error={error} field={list} exact />
          <button
            type="button"
            className="secondary"
            aria-label={`Add condition to condition ${label}`}
            onClick={() => onChange({ ...draft, children: [...draft.children, emptyDraft('event')] })}
          >
            Add condition
          </button>
        </div>
      )
    }
    case 'not':
      return (
        <div className="node-children">
          <NodeEditor
            draft={draft.child}
            at={`${at}/not`}
            label={`${label}.1`}
            error={error}
            onChange={(child) => onChange({ ...draft, child })}
          />
        </div>
      )
    case 'event':
      return (
        <div className="node-fields">
          <NodeInput
            name="Event"
            label={`condition ${label}`}
            value={draft.event}
            field={`${at}/event`}
            error={error}
            onChange={(event) => onChange({ ...draft, event })}
          />
          <NodeSelect
            name="Count"
            label={`condition ${label}`}
            value={draft.countOp}
            options={['', ...COUNT_OPERATORS]}
            empty="at least once"
            field={`${at}/count/op`}
            error={error}
            onChange={(countOp) => onChange({ ...draft, countOp })}
          />
          {draft.countOp !== '' && (
            <NodeInput
              name="Times"
              label={`condition ${label}`}
              type="number"
              value={draft.countValue}
              field={`${at}/count/value`}
              error={error}
              onChange={(countValue) => onChange({ ...draft, countValue })}
            />
          )}
          <NodeInput
            name="Within days"
            label={`condition ${label}`}
            type="number"
            value={draft.withinDays}
            field={`${at}/withinDays`}
            error={error}
            onChange={(withinDays) => onChange({ ...draft, withinDays })}
          />
          <WhereEditor
            where={draft.where}
            onChange={(where) => onChange({ ...draft, where })}
            at={`${at}/where`}
            context={`condition ${label}`}
            error={error}
          />
        </div>
      )
    case 'trait':
    case 'computedTrait':
      return (
        <div className="node-fields">
          <NodeInput
            name={draft.kind === 'trait' ? 'Trait' : 'Computed trait key'}
            label={`condition ${label}`}
            value={draft.name}
            field={`${at}/${draft.kind}`}
            error={error}
            onChange={(name) => onChange({ ...draft, name })}
          />
          <NodeSelect
            name="Operator"
            label={`condition ${label}`}
            value={draft.op}
            options={WHERE_OPERATORS}
            field={`${at}/op`}
            error={error}
            onChange={(op) => onChange({ ...draft, op })}
          />
          {draft.op !== 'exists' && draft.op !== 'not_exists' && (
            <NodeInput
              name="Value"
              label={`condition ${label}`}
              value={draft.value}
              field={`${at}/value`}
              error={error}
              onChange={(value) => onChange({ ...draft, value })}
            />
          )}
        </div>
      )
    default:
      return (
        <div className="node-fields">
          <NodeInput
            name="Audience key"
            label={`condition ${label}`}
            value={draft.key}
            field={`${at}/audience`}
            error={error}
            onChange={(key) => onChange({ ...draft, key })}
          />
        </div>
      )
  }
}

/**
 * The `where` filters of a performed-event condition or a computed trait: property, operator, value,
 * each labelled with its number and what it filters (`context`, e.g. "condition 1.2") for screen readers.
 */
export function WhereEditor({
  where,
  onChange,
  at,
  context,
  error,
}: {
  where: WhereDraft[]
  onChange: (where: WhereDraft[]) => void
  /** JSON pointer of the list, e.g. `/definition/all/0/where`. */
  at: string
  context: string
  error: unknown
}) {
  const change = (index: number, changed: Partial<WhereDraft>) =>
    onChange(where.map((item, at) => (at === index ? { ...item, ...changed } : item)))
  return (
    <div className="where">
      {where.map((item, index) => {
        const label = `${context}, where ${index + 1}`
        const field = `${at}/${index}`
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a filter's place in the list is its identity (and its pointer).
          <div className="where-row" key={index}>
            <NodeInput
              name="Where property"
              label={label}
              value={item.property}
              field={`${field}/property`}
              error={error}
              onChange={(property) => change(index, { property })}
            />
            <NodeSelect
              name="Where operator"
              label={label}
              value={item.op}
              options={WHERE_OPERATORS}
              field={`${field}/op`}
              error={error}
              onChange={(op) => change(index, { op })}
            />
            {item.op !== 'exists' && item.op !== 'not_exists' && (
              <NodeInput
                name={item.op === 'in' ? 'Where values (comma-separated)' : 'Where value'}
                label={label}
                value={item.value}
                field={`${field}/value`}
                error={error}
                onChange={(value) => change(index, { value })}
              />
            )}
            <button
              type="button"
              className="link"
              aria-label={`Remove where ${index + 1} of ${context}`}
              onClick={() => onChange(where.filter((_, at) => at !== index))}
            >
              Remove
            </button>
            <FieldError error={error} field={field} exact />
          </div>
        )
      })}
      <FieldError error={error} field={at} exact />
      <button
        type="button"
        className="secondary"
        aria-label={`Add where to ${context}`}
        onClick={() => onChange([...where, { property: '', op: '=', value: '' }])}
      >
        Add where
      </button>
    </div>
  )
}

interface InputProps {
  /** The visible label; what it belongs to (e.g. "condition 1.2") is added for screen readers. */
  name: string
  label: string
  value: string
  field: string
  error: unknown
  onChange: (value: string) => void
}

/** The props a control gets from its field: its id, and the error state screen readers hear. */
interface ControlProps {
  id: string
  value: string
  'aria-invalid': true | undefined
  'aria-describedby': string | undefined
  onChange: (event: { target: { value: string } }) => void
}

/** A labelled control with the API's error for `field` under it. */
function NodeField({
  name,
  label,
  value,
  field,
  error,
  onChange,
  control,
}: InputProps & { control: (props: ControlProps) => ReactNode }) {
  const id = useId()
  const failed = claims(error, field)
  return (
    <div className="field">
      <label htmlFor={id}>
        {name}
        <span className="visually-hidden"> ({label})</span>
      </label>
      {control({
        id,
        value,
        'aria-invalid': failed || undefined,
        'aria-describedby': failed ? `${id}-error` : undefined,
        onChange: (event) => onChange(event.target.value),
      })}
      <FieldError error={error} field={field} id={`${id}-error`} />
    </div>
  )
}

function NodeInput({ type = 'text', ...props }: InputProps & { type?: string }) {
  return <NodeField {...props} control={(control) => <input type={type} {...control} />} />
}

function NodeSelect({
  options,
  empty,
  ...props
}: InputProps & { options: readonly string[]; empty?: string }) {
  return (
    <NodeField
      {...props}
      control={(control) => (
        <select {...control}>
          {options.map((option) => (
            <option key={option} value={option}>
              {option === '' ? empty : option}
            </option>
          ))}
        </select>
      )}
    />
  )
}
