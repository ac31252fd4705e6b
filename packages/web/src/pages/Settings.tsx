import type { ConfigDocument, ConfigExportQuery } from '@sluice/server/api'
import { useMutation } from '@tanstack/react-query'
import { useState } from 'react'
import { get, queryString } from '../api/client.ts'
import { useCanWrite } from '../session.ts'
import { ErrorBox } from '../ui/errors.tsx'

/** The file name of an export: the same every time, so it replaces the one kept in a repository. */
const EXPORT_FILE = 'sluice.json'

/** Saves `document` as a file through the browser's download. */
function download(document: ConfigDocument): void {
  const blob = new Blob([`${JSON.stringify(document, null, 2)}\n`], { type: 'application/json' })
  const url = URL.createObjectURL(blob)
  const link = window.document.createElement('a')
  link.href = url
  link.download = EXPORT_FILE
  link.click()
  // The download has started from the link; the URL is not needed after this turn.
  setTimeout(() => URL.revokeObjectURL(url), 0)
}

export function Settings() {
  const isAdmin = useCanWrite()
  const [withSecrets, setWithSecrets] = useState(false)
  const exported = useMutation({
    mutationFn: () => {
      const query: ConfigExportQuery = withSecrets ? { secrets: 'include' } : {}
      return get<ConfigDocument>(`/config${queryString(query)}`)
    },
    onSuccess: download,
  })
  return (
    <section>
      <h1>Settings</h1>
      <div className="card">
        <h2>Configuration as code</h2>
        <p className="muted">
          Sources, destinations, computed traits and audiences as one file keyed by names, to keep in a
          repository and apply with <code>sluice config plan</code> and <code>sluice config apply</code>.
          Secrets and write keys are placeholders that keep the values Sluice has.
        </p>
        {isAdmin && (
          <label className="check">
            <input
              type="checkbox"
              checked={withSecrets}
              onChange={(event) => setWithSecrets(event.target.checked)}
            />
            Include secrets and write keys
          </label>
        )}
        <p>
          <button type="button" disabled={exported.isPending} onClick={() => exported.mutate()}>
            Export configuration
          </button>
        </p>
        <ErrorBox error={exported.error} />
      </div>
    </section>
  )
}
