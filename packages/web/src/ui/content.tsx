import { type ReactNode, useState } from 'react'
import { linkHandler } from '../router.ts'

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a href={to} onClick={linkHandler(to)} className={className}>
      {children}
    </a>
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

/** A status as a coloured badge; `label` is what it reads (default: the status itself). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span className={`badge badge-${status}`}>{label ?? status}</span>
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
