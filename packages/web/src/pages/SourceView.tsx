import type { Source } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useCallback, useRef, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { changes, keys, queries } from '../api/queries.ts'
import { LiveDebugger } from '../components/LiveDebugger.tsx'
import { SourceChart } from '../components/SourceChart.tsx'
import { navigate } from '../router.ts'
import { useCanWrite } from '../session.ts'
import { CopyButton, Link } from '../ui/content.tsx'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'
import { Loading } from '../ui/lists.tsx'
import { NotFound } from './NotFound.tsx'

/** After calls arrive, the counters and the chart are read again once things settle this long. */
const REFRESH_AFTER_CALLS_MS = 400

export function SourceView({ id }: { id: string }) {
  const queryClient = useQueryClient()
  const source = useQuery({ ...queries.source(id), refetchInterval: 5_000 })
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null)
  // The counters and the chart follow the live debugger: new calls are committed before they show.
  const onCalls = useCallback(() => {
    if (pending.current) clearTimeout(pending.current)
    pending.current = setTimeout(() => {
      void queryClient.invalidateQueries({ queryKey: keys.source(id) })
      void queryClient.invalidateQueries({ queryKey: ['series', `/sources/${id}`] })
    }, REFRESH_AFTER_CALLS_MS)
  }, [queryClient, id])
  if (source.isPending) return <Loading what="the source" />
  if (source.error instanceof ApiError && source.error.status === 404) {
    return <NotFound what="Source" back={{ to: '/sources', label: 'Back to Sources' }} />
  }
  if (source.error) {
    return (
      <section>
        <p>
          <Link to="/sources">← Sources</Link>
        </p>
        <ErrorBox error={source.error} />
      </section>
    )
  }
  const { data } = source
  return (
    <section>
      <p>
        <Link to="/sources">← Sources</Link>
      </p>
      <SourceHead source={data} />
      <dl className="stats">
        <div>
          <dt>Accepted</dt>
          <dd>{data.stats.accepted.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Rejected</dt>
          <dd>{data.stats.rejected.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Duplicates</dt>
          <dd>{data.stats.duplicates.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Suppressed</dt>
          <dd>{data.stats.suppressed.toLocaleString()}</dd>
        </div>
      </dl>
      <div className="two-columns">
        <WriteKey source={data} />
        <ConnectedDestinations sourceId={id} />
      </div>
      <SourceChart sourceId={id} />
      <LiveDebugger sourceId={id} onCalls={onCalls} />
    </section>
  )
}

/** The name with Rename and Delete source. */
function SourceHead({ source }: { source: Source }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const [draft, setDraft] = useState<string | null>(null)
  const rename = useMutation({
    mutationFn: (name: string) => changes.updateSource(source.id, { name }),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.source(source.id), updated)
      void queryClient.invalidateQueries({ queryKey: keys.sources })
      setDraft(null)
    },
  })
  if (draft !== null) {
    const submit = (event: FormEvent) => {
      event.preventDefault()
      rename.mutate(draft)
    }
    return (
      <form className="card inline-form" aria-label={`Rename ${source.name}`} onSubmit={submit} noValidate>
        <TextField label="Source name" value={draft} onChange={setDraft} error={rename.error} field="/name" />
        <button type="submit" disabled={rename.isPending}>
          Save name
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            rename.reset()
            setDraft(null)
          }}
        >
          Cancel
        </button>
        <ErrorBox error={rename.error} fields={['/name']} />
      </form>
    )
  }
  return (
    <div className="page-head">
      <h1>
        {source.name}{' '}
        <span className={`badge badge-${source.enabled ? 'live' : 'disabled'}`}>
          {source.enabled ? 'Enabled' : 'Disabled'}
        </span>
      </h1>
      {canWrite && (
        <div className="row-actions">
          <button type="button" className="secondary" onClick={() => setDraft(source.name)}>
            Rename
          </button>
          <ConfirmButton
            label="Delete source"
            title={`Delete the source ${source.name}?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              await changes.deleteSource(source.id)
              queryClient.removeQueries({ queryKey: keys.source(source.id) })
              await queryClient.invalidateQueries({ queryKey: keys.sources })
              navigate('/sources')
            }}
          >
            <p>
              Its write key stops working at once, and its stored calls and their deliveries are deleted.
              Destinations connected to it stay. This cannot be undone.
            </p>
          </ConfirmButton>
        </div>
      )}
    </div>
  )
}

function WriteKey({ source }: { source: Source }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const [shown, setShown] = useState(false)
  const origin = location.origin
  return (
    <div className="card">
      <h2>Write key</h2>
      {canWrite ? (
        <>
          <p className="key-row">
            <code className="write-key">{shown ? source.writeKey : '•'.repeat(24)}</code>
            <button type="button" className="secondary" onClick={() => setShown(!shown)}>
              {shown ? 'Hide' : 'Show'}
            </button>
            <CopyButton text={source.writeKey} label="Copy write key" />
            <ConfirmButton
              label="Rotate write key"
              title="Rotate the write key?"
              confirmLabel="Rotate"
              onConfirm={async () => {
                const updated = await changes.rotateWriteKey(source.id)
                queryClient.setQueryData(keys.source(source.id), updated)
                setShown(true)
              }}
            >
              <p>
                A new key is made and the current one stops working at once: every app sending with it must
                get the new one.
              </p>
            </ConfirmButton>
          </p>
          <details>
            <summary>Send a test call with curl</summary>
            <pre className="code">{`curl ${origin}/v1/track -u '${shown ? source.writeKey : '<write key>'}:' \\
  -H 'content-type: application/json' \\
  -d '{"userId":"user-1","event":"Signed Up"}'`}</pre>
          </details>
        </>
      ) : (
        <p>
          <code className="write-key">{source.writeKey}</code>{' '}
          <span className="muted">(hidden from viewers)</span>
        </p>
      )}
    </div>
  )
}

function ConnectedDestinations({ sourceId }: { sourceId: string }) {
  const canWrite = useCanWrite()
  const destinations = useQuery(queries.destinations())
  const connected = (destinations.data?.destinations ?? []).filter((destination) =>
    destination.sourceIds.includes(sourceId),
  )
  return (
    <div className="card">
      <h2 id="connected-destinations">Connected destinations</h2>
      <ErrorBox error={destinations.error} />
      {destinations.isPending ? (
        <Loading what="destinations" />
      ) : connected.length === 0 ? (
        <>
          <p className="muted">No destination gets this source's calls yet: they are stored, not sent.</p>
          {canWrite && (
            <p>
              <Link to="/catalog" className="button">
                Connect a destination
              </Link>
            </p>
          )}
        </>
      ) : (
        <ul aria-labelledby="connected-destinations" className="link-list">
          {connected.map((destination) => (
            <li key={destination.id}>
              <Link to={`/destinations/${destination.id}`}>{destination.name}</Link>
              {!destination.enabled && <span className="muted"> (disabled)</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
