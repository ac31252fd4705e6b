import { useMutation } from '@tanstack/react-query'
import { api } from '../api.ts'
import { ErrorBox } from '../ui.tsx'

interface TestResult {
  ok: boolean
  messageId: string
  results: { url: string; statusCode: number | null; errorText: string | null; latencyMs: number }[]
}

/** "Send test event": one sample track call to every URL now, with what each answered. */
export function TestEvent({ destinationId }: { destinationId: string }) {
  const send = useMutation({
    mutationFn: () => api<TestResult>('POST', `/destinations/${destinationId}/test`),
  })
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
