import { type ReactNode, useId, useState } from 'react'
import { errorConcerns } from '../api/client.ts'
import { FieldError } from './errors.tsx'

/** A labelled text input with its API error below it. */
export function TextField(props: {
  label: string
  value: string
  onChange: (value: string) => void
  error?: unknown
  field?: string
  type?: string
  placeholder?: string
  autoComplete?: string
  hint?: ReactNode
}) {
  const id = useId()
  const errorId = `${id}-error`
  // An error is about what was sent: once the field is edited, it no longer describes what is there.
  const [editedPast, setEditedPast] = useState<unknown>(null)
  const error = props.error === editedPast ? undefined : props.error
  const failed = props.field !== undefined && errorConcerns(error, props.field)
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type={props.type ?? 'text'}
        value={props.value}
        placeholder={props.placeholder}
        autoComplete={props.autoComplete}
        aria-invalid={failed || undefined}
        aria-describedby={failed ? errorId : undefined}
        onChange={(event) => {
          if (failed) setEditedPast(props.error)
          props.onChange(event.target.value)
        }}
      />
      {props.hint && <p className="hint">{props.hint}</p>}
      {props.field && <FieldError error={error} field={props.field} id={errorId} label={props.label} />}
    </div>
  )
}

interface ChoiceProps<Value extends string> {
  label: string
  value: Value
  /** The values offered, in order. */
  options: readonly Value[]
  onChange: (value: Value) => void
  /** What an option shows; default: its value. */
  optionLabel?: (value: Value) => string
}

function Options<Value extends string>({
  options,
  optionLabel,
}: Pick<ChoiceProps<Value>, 'options' | 'optionLabel'>) {
  return options.map((option) => (
    <option key={option} value={option}>
      {optionLabel ? optionLabel(option) : option}
    </option>
  ))
}

/** A compact choice whose label wraps it, such as a list filter. */
export function Select<Value extends string>(props: ChoiceProps<Value>) {
  return (
    <div className="field">
      <label>
        {props.label}
        {/* The options are exactly the values: the one chosen is a Value. */}
        <select value={props.value} onChange={(event) => props.onChange(event.target.value as Value)}>
          <Options options={props.options} optionLabel={props.optionLabel} />
        </select>
      </label>
    </div>
  )
}

/** A form's choice, labelled like a TextField, with the API's error about `field` below it. */
export function SelectField<Value extends string>(
  props: ChoiceProps<Value> & { error?: unknown; field?: string },
) {
  const id = useId()
  const failed = props.field !== undefined && errorConcerns(props.error, props.field)
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        aria-invalid={failed || undefined}
        onChange={(event) => props.onChange(event.target.value as Value)}
      >
        <Options options={props.options} optionLabel={props.optionLabel} />
      </select>
      {props.field && <FieldError error={props.error} field={props.field} label={props.label} />}
    </div>
  )
}

/**
 * Checkboxes choosing some of `items` (sources, destinations), in a fieldset with the API's error about
 * the list. `children` come first: a hint, or a note that the items are loading or that there are none.
 */
export function CheckboxList({
  id,
  legend,
  className = 'plain-fieldset',
  items,
  chosen,
  onChange,
  error,
  field,
  children,
}: {
  /** The fieldset's id, e.g. for a link that scrolls to it. */
  id?: string
  legend: string
  className?: string
  items: readonly { id: string; name: string }[]
  chosen: string[]
  onChange: (ids: string[]) => void
  error: unknown
  /** JSON pointer of the list in the request, e.g. `/sourceIds`. */
  field: string
  children?: ReactNode
}) {
  return (
    <fieldset className={className} id={id}>
      <legend>{legend}</legend>
      {children}
      {items.map((item) => (
        <label key={item.id} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(item.id)}
            onChange={(event) =>
              onChange(event.target.checked ? [...chosen, item.id] : chosen.filter((id) => id !== item.id))
            }
          />{' '}
          {item.name}
        </label>
      ))}
      <FieldError error={error} field={field} label={legend.replace(/^\d+\.\s*/, '')} />
    </fieldset>
  )
}
