/**
 * A destination's replays (docs/webhooks.md, "Replay and backfill"): start one over a window of stored
 * calls, follow each one's progress, cancel a running one. Viewers see the list only.
 */
import type { Replay } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { useCanWrite } from '../session.ts'
import { formatTime } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'
import { Fold } from '../ui/fold.tsx'
import { Loading, TableScroll } from '../ui/lists.tsx'

/** A `datetime-local` value (local time, minutes) for an instant. */
function localInput(at: number): string {
  const date = new Date(at - new Date(at).getTimezoneOffset() * 60_000)
  return date.toISOString().slice(0, 16)
}

const STATUS_BADGES: Record<Replay['status'], string> = {
  RUNNING: 'badge-retrying',
  FINISHED: 'badge-delivered',
  CANCELLED: 'badge-disabled',
  FAILED: 'badge-failed',
}

/** `open`: shown open at first, e.g. when the save just started one. */
export function Replays({ destinationId, open }: { destinationId: string; open?: boolean | undefined }) {
  const canWrite = useCanWrite()
  const list = useQuery({
    ...queries.replays(destinationId),
    // Progress moves while one runs.
    refetchInterval: (query) =>
      query.state.data?.replays.some((replay) => replay.status === 'RUNNING') ? 1_000 : 10_000,
  })
  const replays = list.data?.replays ?? []
  const running = replays.filter((replay) => replay.status === 'RUNNING').length
  const summary = list.isPending
    ? undefined
    : running > 0
      ? `${running.toLocaleString()} running`
      : replays.length === 0
        ? 'None yet'
        : `${replays.length.toLocaleString()} done`
  return (
    <Fold title="Replays" headingId="replays" summary={summary} {...(open === undefined ? {} : { open })}>
      <p className="muted">
        Send stored calls received in a window to this destination again, through its subscription, filters,
        mapping and batching. Calls it already got are skipped. Live calls go first. Calls are read once they
        are 10 seconds old (by default), so a window reaching the present finishes that long after its end.
      </p>
      {canWrite && <StartReplay destinationId={destinationId} />}
      {list.isPending ? (
        <Loading what="replays" />
      ) : replays.length === 0 ? (
        <p className="muted">No replay yet.</p>
      ) : (
        <TableScroll label="Replays and their progress">
          <table>
            <caption className="visually-hidden">Replays and their progress</caption>
            <thead>
              <tr>
                <th scope="col">Window</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Read
                </th>
                <th scope="col" className="num">
                  Matched
                </th>
                <th scope="col" className="num">
                  Skipped
                </th>
                <th scope="col" className="num">
                  Delivered
                </th>
                <th scope="col" className="num">
                  Failed
                </th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {replays.map((replay) => (
                <ReplayRow
                  key={replay.id}
                  replay={replay}
                  destinationId={destinationId}
                  canWrite={canWrite}
                />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <ErrorBox error={list.error} />
    </Fold>
  )
}

function ReplayRow({
  replay,
  destinationId,
  canWrite,
}: {
  replay: Replay
  destinationId: string
  canWrite: boolean
}) {
  const queryClient = useQueryClient()
  const cancel = useMutation({
    mutationFn: () => changes.cancelReplay(destinationId, replay.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.replays(destinationId) }),
  })
  return (
    <tr>
      <td>
        {formatTime(replay.from)} – {formatTime(replay.to)}
        {replay.force && <span className="muted"> (forced)</span>}
      </td>
      <td>
        <span className={`badge ${STATUS_BADGES[replay.status]}`}>{replay.status.toLowerCase()}</span>
        {replay.error && <span className="error-text"> {replay.error}</span>}
      </td>
      <td className="num">{replay.scanned.toLocaleString()}</td>
      <td className="num">{replay.matched.toLocaleString()}</td>
      <td className="num">{replay.skipped.toLocaleString()}</td>
      <td className="num">
        {replay.delivered.toLocaleString()} / {replay.enqueued.toLocaleString()}
      </td>
      <td className="num">{replay.failed.toLocaleString()}</td>
      {canWrite && (
        <td>
          {replay.status === 'RUNNING' && (
            <button
              type="button"
              className="secondary"
              disabled={cancel.isPending}
              onClick={() => cancel.mutate()}
              aria-label={`Cancel the replay from ${formatTime(replay.from)}`}
            >
              {cancel.isPending ? 'Cancelling…' : 'Cancel'}
            </button>
          )}
          <ErrorBox error={cancel.error} />
        </td>
      )}
    </tr>
  )
}

function StartReplay({ destinationId }: { destinationId: string }) {
  const queryClient = useQueryClient()
  const [from, setFrom] = useState(() => localInput(Date.now() - 24 * 3_600_000))
  // The field shows minutes: the next minute's start, so calls of the current one are in.
  const [to, setTo] = useState(() => localInput(Date.now() + 60_000))
  const [force, setForce] = useState(false)
  const start = useMutation({
    mutationFn: () =>
      changes.startReplay(destinationId, {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        force,
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.replays(destinationId) }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    start.mutate()
  }
  return (
    <form onSubmit={submit} className="inline-form" aria-label="Start a replay">
      <TextField
        label="From"
        type="datetime-local"
        value={from}
        onChange={setFrom}
        error={start.error}
        field="/from"
      />
      <TextField
        label="To"
        type="datetime-local"
        value={to}
        onChange={setTo}
        error={start.error}
        field="/to"
      />
      <label className="check">
        <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} /> Also
        send calls it already got
      </label>
      <button type="submit" disabled={start.isPending}>
        Start replay
      </button>
      <ErrorBox error={start.error} fields={['/from', '/to']} />
    </form>
  )
}
