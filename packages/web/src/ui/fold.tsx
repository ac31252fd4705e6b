import { type ReactNode, useId, useState } from 'react'

/** The width under which folds start folded: the app's phone layout (styles.css). */
const NARROW = '(max-width: 760px)'

function narrowScreen(): boolean {
  return typeof window !== 'undefined' && window.matchMedia?.(NARROW).matches === true
}

/**
 * A card whose content folds away under its heading (the disclosure pattern: the heading holds a
 * button that says whether it is expanded). Open on a wide screen; folded on a phone, where a long
 * page of cards is hard to find one's way in, each showing its `summary` until opened. The content
 * stays mounted while folded, so what was typed or opened in it stays.
 */
export function Fold({
  title,
  headingId,
  summary,
  open: openAtStart,
  className,
  children,
}: {
  title: string
  /** The heading's id, for lists labelled by it. */
  headingId?: string
  /** One line that says what is inside, shown beside the title. */
  summary?: ReactNode
  /** Open or folded at first, whatever the screen's width. */
  open?: boolean
  className?: string
  children: ReactNode
}) {
  const [open, setOpen] = useState(() => openAtStart ?? !narrowScreen())
  const panel = useId()
  const ownHeadingId = useId()
  const heading = headingId ?? ownHeadingId
  return (
    // A region named by its heading: screen readers list the page's folds as landmarks.
    <section className={`card fold${className ? ` ${className}` : ''}`} aria-labelledby={heading}>
      <div className="fold-head">
        <h2 id={heading}>
          <button
            type="button"
            className="fold-toggle"
            aria-expanded={open}
            aria-controls={panel}
            onClick={() => setOpen(!open)}
          >
            {title}
          </button>
        </h2>
        {summary !== undefined && summary !== null && <span className="fold-summary muted">{summary}</span>}
      </div>
      <div id={panel} className="fold-body" hidden={!open}>
        {children}
      </div>
    </section>
  )
}
