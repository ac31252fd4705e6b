import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { LiveDebugger } from '../components/LiveDebugger.tsx'
import { SourceChart } from '../components/SourceChart.tsx'
import { useCanWrite } from '../session.ts'
import { CopyButton, Link } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { Loading } from '../ui/lists.tsx'

export function SourceView({ id }: { id: string }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const [shown, setShown] = useState(false)
  const source = useQuery({ ...queries.source(id), refetchInterval: 5_000 })
  const rotate = useMutation({
    mutationFn: () => changes.rotateWriteKey(id),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.source(id), updated)
      setShown(true)
    },
  })
  if (source.isPending) return <Loading what="the source" />
  if (source.error) return <ErrorBox error={source.error} />
  const { data } = source
  const origin = location.origin
  return (
    <section>
      <p>
        <Link to="/sources">← Sources</Link>
      </p>
      <h1>{data.name}</h1>
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
        <div>
          <dt>Status</dt>
          <dd>{data.enabled ? 'Enabled' : 'Disabled'}</dd>
        </div>
      </dl>
      <div className="card">
        <h2>Write key</h2>
        {canWrite ? (
          <>
            <p className="key-row">
              <code className="write-key">{shown ? data.writeKey : '•'.repeat(24)}</code>
              <button type="button" className="secondary" onClick={() => setShown(!shown)}>
                {shown ? 'Hide' : 'Show'}
              </button>
              <CopyButton text={data.writeKey} label="Copy write key" />
              <button
                type="button"
                className="danger"
                disabled={rotate.isPending}
                onClick={() => {
                  if (confirm('Rotate the write key? The current key stops working at once.')) rotate.mutate()
                }}
              >
                Rotate write key
              </button>
            </p>
            <ErrorBox error={rotate.error} />
            <details>
              <summary>Send a test call with curl</summary>
              <pre className="code">{`curl ${origin}/v1/track -u '${shown ? data.writeKey : '<write key>'}:' \\
  -H 'content-type: application/json' \\
  -d '{"userId":"user-1","event":"Signed Up"}'`}</pre>
            </details>
          </>
        ) : (
          <p>
            <code className="write-key">{data.writeKey}</code>{' '}
            <span className="muted">(hidden from viewers)</span>
          </p>
        )}
      </div>
      <SourceChart sourceId={id} />
      <LiveDebugger sourceId={id} />
    </section>
  )
}
