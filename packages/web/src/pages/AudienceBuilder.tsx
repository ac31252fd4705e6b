/**
 * The audience definition as a tree of small forms: all/any groups, not, and the leaves (performed event,
 * trait, computed trait, in audience). Each node knows its JSON pointer, so the API's 400 is shown next
 * to the node it points at (e.g. `/definition/all/1/computedTrait`).
 */
import { useId } from 'react'
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
  | { kind: 'event'; event: string; countOp: string; countValue: string; withinDays: string }
  | { kind: 'trait' | 'computedTrait'; name: string; op: string; value: string }
  | { kind: 'audience'; key: string }

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
      return { kind, event: '', countOp: '', countValue: '1', withinDays: '' }
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
            label={label}
            value={draft.event}
            field={`${at}/event`}
            error={error}
            onChange={(event) => onChange({ ...draft, event })}
          />
          <NodeSelect
            name="Count"
            label={label}
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
              label={label}
              type="number"
              value={draft.countValue}
              field={`${at}/count/value`}
              error={error}
              onChange={(countValue) => onChange({ ...draft, countValue })}
            />
          )}
          <NodeInput
            name="Within days"
            label={label}
            type="number"
            value={draft.withinDays}
            field={`${at}/withinDays`}
            error={error}
            onChange={(withinDays) => onChange({ ...draft, withinDays })}
          />
        </div>
      )
    case 'trait':
    case 'computedTrait':
      return (
        <div className="node-fields">
          <NodeInput
            name={draft.kind === 'trait' ? 'Trait' : 'Computed trait key'}
            label={label}
            value={draft.name}
            field={`${at}/${draft.kind}`}
            error={error}
            onChange={(name) => onChange({ ...draft, name })}
          />
          <NodeSelect
            name="Operator"
            label={label}
            value={draft.op}
            options={WHERE_OPERATORS}
            field={`${at}/op`}
            error={error}
            onChange={(op) => onChange({ ...draft, op })}
          />
          {draft.op !== 'exists' && draft.op !== 'not_exists' && (
            <NodeInput
              name="Value"
              label={label}
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
            label={label}
            value={draft.key}
            field={`${at}/audience`}
            error={error}
            onChange={(key) => onChange({ ...draft, key })}
          />
        </div>
      )
  }
}

interface InputProps {
  /** The visible label; the condition number is added for screen readers. */
  name: string
  label: string
  value: string
  field: string
  error: unknown
  onChange: (value: string) => void
}

function NodeInput({
  name,
  label,
  value,
  field,
  error,
  onChange,
  type = 'text',
}: InputProps & { type?: string }) {
  const id = useId()
  const failed = claims(error, field)
  return (
    <div className="field">
      <label htmlFor={id}>
        {name}
        <span className="visually-hidden"> (condition {label})</span>
      </label>
      <input
        id={id}
        type={type}
        value={value}
        aria-invalid={failed || undefined}
        aria-describedby={failed ? `${id}-error` : undefined}
        onChange={(event) => onChange(event.target.value)}
      />
      <FieldError error={error} field={field} id={`${id}-error`} />
    </div>
  )
}

function NodeSelect({
  name,
  label,
  value,
  field,
  error,
  onChange,
  options,
  empty,
}: InputProps & { options: readonly string[]; empty?: string }) {
  const id = useId()
  const failed = claims(error, field)
  return (
    <div className="field">
      <label htmlFor={id}>
        {name}
        <span className="visually-hidden"> (condition {label})</span>
      </label>
      <select
        id={id}
        value={value}
        aria-invalid={failed || undefined}
        aria-describedby={failed ? `${id}-error` : undefined}
        onChange={(event) => onChange(event.target.value)}
      >
        {options.map((option) => (
          <option key={option} value={option}>
            {option === '' ? empty : option}
          </option>
        ))}
      </select>
      <FieldError error={error} field={field} id={`${id}-error`} />
    </div>
  )
}
