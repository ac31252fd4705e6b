import type { LiveCall } from '@sluice/server/api'
import { useEffect, useRef, useState } from 'react'
import { CodeBlock } from '../ui/content.tsx'

/** At most this many calls are kept on screen, newest first. */
const KEEP = 200

/**
 * Calls arriving now, streamed over Server-Sent Events: pausable, searchable, pretty or raw JSON. The
 * stream opens with the source's recent calls, so a reload keeps what was there. `onCalls` hears of
 * new ones (the page's counters and chart follow them).
 */
export function LiveDebugger({ sourceId, onCalls }: { sourceId: string; onCalls?: () => void }) {
  const [calls, setCalls] = useState<(LiveCall & { key: number })[]>([])
  const [paused, setPaused] = useState(false)
  const [connected, setConnected] = useState(false)
  const [search, setSearch] = useState('')
  const [raw, setRaw] = useState(false)
  const [selected, setSelected] = useState<number | null>(null)
  const pausedRef = useRef(paused)
  pausedRef.current = paused
  const nextKey = useRef(0)
  const onCallsRef = useRef(onCalls)
  onCallsRef.current = onCalls

  useEffect(() => {
    const source = new EventSource(`/api/v1/sources/${sourceId}/live`)
    source.onopen = () => setConnected(true)
    source.onerror = () => setConnected(false)
    const keyed = (data: string) =>
      (JSON.parse(data) as LiveCall[]).map((call) => ({ ...call, key: nextKey.current++ })).reverse()
    // First on every (re)connection: the recent calls, newest last; they replace what is shown.
    source.addEventListener('history', (event) => {
      setCalls(keyed((event as MessageEvent).data).slice(0, KEEP))
    })
    source.addEventListener('calls', (event) => {
      onCallsRef.current?.()
      if (pausedRef.current) return
      const arrived = keyed((event as MessageEvent).data)
      setCalls((previous) => [...arrived, ...previous].slice(0, KEEP))
    })
    return () => source.close()
  }, [sourceId])

  const needle = search.trim().toLowerCase()
  const visible = needle ? calls.filter((call) => JSON.stringify(call).toLowerCase().includes(needle)) : calls
  const current = calls.find((call) => call.key === selected) ?? visible[0]

  return (
    <div className="card">
      <h2>Live debugger</h2>
      <div className="toolbar">
        <span className={connected ? 'live-dot on' : 'live-dot'} role="status">
          {connected ? (paused ? 'Paused' : 'Listening') : 'Connecting…'}
        </span>
        <button type="button" className="secondary" onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <label className="search">
          <span className="visually-hidden">Search calls</span>
          <input
            type="search"
            placeholder="Search calls"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={raw} onChange={(event) => setRaw(event.target.checked)} /> Raw JSON
        </label>
        <button type="button" className="secondary" onClick={() => setCalls([])}>
          Clear
        </button>
      </div>
      {visible.length === 0 ? (
        <p className="muted">
          {calls.length === 0
            ? 'Waiting for calls to this source. Send one with its write key (see "Send a test call with curl" above); it shows here at once.'
            : 'No call matches the search.'}
        </p>
      ) : (
        <div className="debugger">
          <ul className="call-list" aria-label="Calls">
            {visible.map((call) => {
              const body = (call.call ?? {}) as Record<string, unknown>
              return (
                <li key={call.key}>
                  <button
                    type="button"
                    className={`call-row ${call === current ? 'selected' : ''}`}
                    aria-pressed={call === current}
                    onClick={() => setSelected(call.key)}
                  >
                    <span className={`badge badge-${call.status}`}>{call.status}</span>
                    <span className="call-type">{call.type ?? 'no type'}</span>
                    <span className="call-name">{String(body.event ?? body.name ?? body.userId ?? '')}</span>
                    <time className="muted">{new Date(call.at).toLocaleTimeString()}</time>
                  </button>
                </li>
              )
            })}
          </ul>
          {current && (
            <div className="call-detail">
              {current.reason && (
                <p className="error-box" role="alert">
                  Rejected: {current.reason}
                </p>
              )}
              <CodeBlock label="Call JSON">
                {raw ? JSON.stringify(current.call) : JSON.stringify(current.call, null, 2)}
              </CodeBlock>
            </div>
          )}
        </div>
      )}
    </div>
  )
}
