import type { ReactNode } from 'react'
import { ErrorBox } from './errors.tsx'

export function Loading({ what }: { what: string }) {
  return <p className="muted">Loading {what}…</p>
}

/**
 * A list loaded from the API, in its states: its error above it, "Loading…" until it arrives, `empty`
 * when it has no items, else `children` (the list itself).
 */
export function ListStates({
  pending,
  error,
  items,
  what,
  empty,
  children,
}: {
  pending: boolean
  /** Shown above; `null` when the page shows it elsewhere. */
  error: unknown
  items: readonly unknown[] | undefined
  /** For "Loading {what}…". */
  what: string
  /** Shown instead of `children` when there are no items; none: `children` show the empty list. */
  empty?: ReactNode
  children: ReactNode
}) {
  return (
    <>
      <ErrorBox error={error} />
      {pending ? <Loading what={what} /> : empty !== undefined && items?.length === 0 ? empty : children}
    </>
  )
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

/** What a viewer sees where a page or form is for admins only. */
export function AdminOnly({ what }: { what: string }) {
  return (
    <div className="card notice" role="note">
      <p>
        <strong>{what} is for admins only.</strong> You are signed in with a viewer token, which reads
        everything but cannot change anything. Ask an admin, or sign in with an admin token.
      </p>
    </div>
  )
}

/** A list with nothing in it yet: what it is for, and what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="card empty-state">
      <p className="empty-title">{title}</p>
      {children && <div className="muted">{children}</div>}
    </div>
  )
}
