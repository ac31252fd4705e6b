import { useMutation } from '@tanstack/react-query'
import { changes } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'

/** "Send test event": one sample track call to every URL now, with what each answered. */
export function TestEvent({ destinationId }: { destinationId: string }) {
  const send = useMutation({ mutationFn: () => changes.sendTestEvent(destinationId) })
  return (
    <div className="test-event">
      <button type="button" className="secondary" disabled={send.isPending} onClick={() => send.mutate()}>
        Send test event
      </button>
      <ErrorBox error={send.error} />
      {send.data && (
        <ul className="test-results" aria-label="Test results">
          {send.data.results.map((result) => (
            <li
              key={result.url}
              className={result.statusCode !== null && result.statusCode < 300 ? 'ok' : 'bad'}
            >
              <code>{result.url}</code>: {result.statusCode ?? 'no answer'}
              {result.errorText ? ` — ${result.errorText}` : ''} ({result.latencyMs} ms)
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
