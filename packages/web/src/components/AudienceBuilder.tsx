/**
 * The audience definition as a tree of small forms: all/any groups, not, and the leaves (performed event,
 * trait, computed trait, in audience). The draft, its definition and every input's JSON pointer come
 * from the model (model/audience-draft.ts), so the API's 400 is shown next to the input it points at
 * (e.g. `/definition/all/1/computedTrait`).
 */
import { COUNT_OPERATORS, WHERE_OPERATORS } from '@sluice/server/api'
import { type ReactNode, useId } from 'react'
import { errorConcerns } from '../api/client.ts'
import {
  DRAFT_KINDS,
  type Draft,
  emptyDraft,
  emptyWhere,
  KIND_LABELS,
  pointers,
  takesValue,
  type WhereDraft,
} from '../model/audience-draft.ts'
import { FieldError } from '../ui/errors.tsx'

/** The count choices; the empty one is "at least once". */
const COUNT_CHOICES = ['', ...COUNT_OPERATORS] as const

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
    <fieldset className={`node node-${draft.kind}${errorConcerns(error, at) ? ' node-failed' : ''}`}>
      <legend>Condition {label}</legend>
      <div className="node-head">
        <label htmlFor={`${id}-kind`} className="visually-hidden">
          Type of condition {label}
        </label>
        <select
          id={`${id}-kind`}
          value={draft.kind}
          // The options are exactly the kinds.
          onChange={(event) => onChange(emptyDraft(event.target.value as Draft['kind']))}
        >
          {DRAFT_KINDS.map((kind) => (
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
      const list = pointers.group(at, draft.kind)
      return (
        <div className="node-children">
          {draft.children.map((child, index) => (
            <NodeEditor
              // biome-ignore lint/suspicious/noArrayIndexKey: a node's place in its group is its identity (and its pointer).
              key={index}
              draft={child}
              at={pointers.item(list, index)}
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
            at={pointers.not(at)}
            label={`${label}.1`}
            error={error}
            onChange={(child) => onChange({ ...draft, child })}
          />
        </div>
      )
    case 'event': {
      const fields = pointers.event(at)
      return (
        <div className="node-fields">
          <NodeInput
            name="Event"
            label={`condition ${label}`}
            value={draft.event}
            field={fields.event}
            error={error}
            onChange={(event) => onChange({ ...draft, event })}
          />
          <NodeSelect
            name="Count"
            label={`condition ${label}`}
            value={draft.countOp}
            options={COUNT_CHOICES}
            empty="at least once"
            field={fields.countOp}
            error={error}
            onChange={(countOp) => onChange({ ...draft, countOp })}
          />
          {draft.countOp !== '' && (
            <NodeInput
              name="Times"
              label={`condition ${label}`}
              type="number"
              value={draft.countValue}
              field={fields.countValue}
              error={error}
              onChange={(countValue) => onChange({ ...draft, countValue })}
            />
          )}
          <NodeInput
            name="Within days"
            label={`condition ${label}`}
            type="number"
            value={draft.withinDays}
            field={fields.withinDays}
            error={error}
            onChange={(withinDays) => onChange({ ...draft, withinDays })}
          />
          <WhereEditor
            where={draft.where}
            onChange={(where) => onChange({ ...draft, where })}
            at={fields.where}
            context={`condition ${label}`}
            error={error}
          />
        </div>
      )
    }
    case 'trait':
    case 'computedTrait': {
      const fields = pointers.comparison(at, draft.kind)
      return (
        <div className="node-fields">
          <NodeInput
            name={draft.kind === 'trait' ? 'Trait' : 'Computed trait key'}
            label={`condition ${label}`}
            value={draft.name}
            field={fields.name}
            error={error}
            onChange={(name) => onChange({ ...draft, name })}
          />
          <NodeSelect
            name="Operator"
            label={`condition ${label}`}
            value={draft.op}
            options={WHERE_OPERATORS}
            field={fields.op}
            error={error}
            onChange={(op) => onChange({ ...draft, op })}
          />
          {takesValue(draft.op) && (
            <NodeInput
              name="Value"
              label={`condition ${label}`}
              value={draft.value}
              field={fields.value}
              error={error}
              onChange={(value) => onChange({ ...draft, value })}
            />
          )}
        </div>
      )
    }
    default:
      return (
        <div className="node-fields">
          <NodeInput
            name="Audience key"
            label={`condition ${label}`}
            value={draft.key}
            field={pointers.audience(at)}
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
        const fields = pointers.where(at, index)
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a filter's place in the list is its identity (and its pointer).
          <div className="where-row" key={index}>
            <NodeInput
              name="Where property"
              label={label}
              value={item.property}
              field={fields.property}
              error={error}
              onChange={(property) => change(index, { property })}
            />
            <NodeSelect
              name="Where operator"
              label={label}
              value={item.op}
              options={WHERE_OPERATORS}
              field={fields.op}
              error={error}
              onChange={(op) => change(index, { op })}
            />
            {takesValue(item.op) && (
              <NodeInput
                name={item.op === 'in' ? 'Where values (comma-separated)' : 'Where value'}
                label={label}
                value={item.value}
                field={fields.value}
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
            <FieldError error={error} field={fields.filter} exact />
          </div>
        )
      })}
      <FieldError error={error} field={at} exact />
      <button
        type="button"
        className="secondary"
        aria-label={`Add where to ${context}`}
        onClick={() => onChange([...where, emptyWhere()])}
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
  const failed = errorConcerns(error, field)
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

function NodeSelect<Value extends string>({
  options,
  empty,
  onChange,
  ...props
}: Omit<InputProps, 'value' | 'onChange'> & {
  value: Value
  options: readonly Value[]
  /** What the empty option says. */
  empty?: string
  onChange: (value: Value) => void
}) {
  return (
    <NodeField
      {...props}
      // The options are exactly the values: the one chosen is a Value.
      onChange={(value) => onChange(value as Value)}
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
