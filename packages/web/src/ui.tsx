import { type ReactNode, useId, useState } from 'react'
import { ApiError } from './api.ts'
import { linkHandler } from './router.ts'

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a href={to} onClick={linkHandler(to)} className={className}>
      {children}
    </a>
  )
}

/** The API's error for one field (matched by JSON pointer prefix), shown next to that field. */
export function FieldError({
  error,
  field,
  id,
  exact = false,
}: {
  error: unknown
  field: string
  id?: string
  /** Only an error about exactly this field, not about one inside it. */
  exact?: boolean
}) {
  if (!(error instanceof ApiError) || error.field === undefined) return null
  if (error.field !== field && (exact || !error.field.startsWith(`${field}/`))) return null
  return (
    <p className="field-error" role="alert" id={id}>
      {error.message}
    </p>
  )
}

/** An error that no field claims: shown at the top of the form or page. */
export function ErrorBox({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null
  if (error instanceof ApiError && error.field !== undefined) {
    const claimed = fields.some((field) => error.field === field || error.field?.startsWith(`${field}/`))
    if (claimed) return null
  }
  return (
    <div className="error-box" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </div>
  )
}

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
  const failed =
    props.error instanceof ApiError &&
    props.field !== undefined &&
    (props.error.field === props.field || props.error.field?.startsWith(`${props.field}/`))
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
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.hint && <p className="hint">{props.hint}</p>}
      {props.field && <FieldError error={props.error} field={props.field} id={errorId} />}
    </div>
  )
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {})
        setCopied(true)
        setTimeout(() => setCopied(false), 1500)
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  )
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{status}</span>
}

export function formatTime(iso: string | null): string {
  if (!iso) return '—'
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })
}

/** A block of code or JSON: a labelled region, focusable so that keyboards can scroll it. */
export function CodeBlock({ label, children }: { label: string; children: ReactNode }) {
  return (
    <section aria-label={label} className="code-block">
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable block must be reachable by keyboard. */}
      <pre className="code" tabIndex={0}>
        {children}
      </pre>
    </section>
  )
}

export function Loading({ what }: { what: string }) {
  return <p className="muted">Loading {what}…</p>
}

/** A wide table that scrolls sideways on small screens: a labelled region, focusable for keyboards. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
    <section aria-label={label} className="table-scroll" tabIndex={0}>
      {children}
    </section>
  )
}
