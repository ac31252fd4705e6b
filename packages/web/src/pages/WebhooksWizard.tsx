import type { SavedDestination } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { TestEvent } from '../components/TestEvent.tsx'
import { useCanWrite } from '../session.ts'
import { Link } from '../ui/content.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { CheckboxList, TextField } from '../ui/fields.tsx'
import { Loading } from '../ui/lists.tsx'

const MAX_URLS = 5

interface HeaderRow {
  name: string
  value: string
}
interface UrlRow {
  url: string
  headers: HeaderRow[]
}

/** Catalog → Webhooks: sources, up to 5 URLs with headers, the shared secret, enable. */
export function WebhooksWizard() {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const sources = useQuery(queries.sources())
  const [name, setName] = useState('Webhooks')
  const [sourceIds, setSourceIds] = useState<string[]>([])
  const [urls, setUrls] = useState<UrlRow[]>([{ url: '', headers: [] }])
  const [secret, setSecret] = useState('')
  const [enabled, setEnabled] = useState(true)
  const create = useMutation({
    mutationFn: () =>
      changes.createDestination({
        name,
        type: 'webhooks',
        enabled,
        sourceIds,
        settings: {
          webhooks: urls.map((row) => ({
            url: row.url.trim(),
            headers: Object.fromEntries(
              row.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value]),
            ),
          })),
          sharedSecret: secret === '' ? null : secret,
        },
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.destinations }),
  })
  if (!canWrite)
    return <p className="card">Viewers cannot set up destinations. Sign in with an admin token.</p>
  if (create.data) return <Created destination={create.data} />

  const updateUrl = (index: number, change: Partial<UrlRow>) =>
    setUrls(urls.map((row, at) => (at === index ? { ...row, ...change } : row)))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  const error = create.error
  return (
    <section>
      <p>
        <Link to="/catalog">← Catalog</Link>
      </p>
      <h1>Set up Webhooks</h1>
      <form onSubmit={submit} className="wizard" noValidate>
        <fieldset className="card">
          <legend>1. Name</legend>
          <TextField label="Destination name" value={name} onChange={setName} error={error} field="/name" />
        </fieldset>
        <CheckboxList
          legend="2. Sources"
          className="card"
          items={sources.data?.sources ?? []}
          chosen={sourceIds}
          onChange={setSourceIds}
          error={error}
          field="/sourceIds"
        >
          {sources.isPending && <Loading what="sources" />}
          {sources.data?.sources.length === 0 && (
            <p>
              No sources yet: <Link to="/sources">create one</Link> first.
            </p>
          )}
        </CheckboxList>
        <fieldset className="card">
          <legend>3. URLs (up to {MAX_URLS})</legend>
          {urls.map((row, index) => (
            <UrlEditor
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and only removed from the end.
              key={index}
              index={index}
              row={row}
              error={error}
              onChange={(change) => updateUrl(index, change)}
              onRemove={urls.length > 1 ? () => setUrls(urls.filter((_, at) => at !== index)) : undefined}
            />
          ))}
          <FieldError error={error} field="/settings/webhooks" exact />
          {urls.length < MAX_URLS && (
            <button
              type="button"
              className="secondary"
              onClick={() => setUrls([...urls, { url: '', headers: [] }])}
            >
              Add URL
            </button>
          )}
        </fieldset>
        <fieldset className="card">
          <legend>4. Signature</legend>
          <TextField
            label="Shared secret"
            type="password"
            autoComplete="new-password"
            value={secret}
            onChange={setSecret}
            error={error}
            field="/settings/sharedSecret"
            hint="Optional. Each request then carries X-Signature: the hex HMAC-SHA1 of the body with this secret."
          />
        </fieldset>
        <fieldset className="card">
          <legend>5. Enable</legend>
          <label className="check">
            <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} />{' '}
            Enabled: send data as soon as it is saved
          </label>
        </fieldset>
        <ErrorBox error={error} fields={['/name', '/sourceIds', '/settings']} />
        <button type="submit" disabled={create.isPending}>
          Save destination
        </button>
      </form>
    </section>
  )
}

function UrlEditor(props: {
  index: number
  row: UrlRow
  error: unknown
  onChange: (change: Partial<UrlRow>) => void
  onRemove: (() => void) | undefined
}) {
  const { index, row, error, onChange } = props
  const id = useId()
  const field = `/settings/webhooks/${index}`
  const setHeader = (at: number, change: Partial<HeaderRow>) =>
    onChange({ headers: row.headers.map((header, i) => (i === at ? { ...header, ...change } : header)) })
  return (
    <div className="url-editor">
      <TextField
        label={`URL ${index + 1}`}
        type="url"
        placeholder="https://example.com/hooks/sluice"
        value={row.url}
        onChange={(url) => onChange({ url })}
        error={error}
        field={`${field}/url`}
      />
      {row.headers.map((header, at) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: header rows have no identity but their position.
        <div className="header-row" key={at}>
          <label htmlFor={`${id}-h${at}-name`}>
            Header name <span className="visually-hidden">{`${at + 1} of URL ${index + 1}`}</span>
          </label>
          <input
            id={`${id}-h${at}-name`}
            value={header.name}
            placeholder="Authorization"
            onChange={(event) => setHeader(at, { name: event.target.value })}
          />
          <label htmlFor={`${id}-h${at}-value`}>
            Header value <span className="visually-hidden">{`${at + 1} of URL ${index + 1}`}</span>
          </label>
          <input
            id={`${id}-h${at}-value`}
            value={header.value}
            onChange={(event) => setHeader(at, { value: event.target.value })}
          />
          <button
            type="button"
            className="secondary"
            onClick={() => onChange({ headers: row.headers.filter((_, i) => i !== at) })}
          >
            Remove header
          </button>
        </div>
      ))}
      <FieldError error={error} field={`${field}/headers`} />
      <div className="row-actions">
        <button
          type="button"
          className="secondary"
          onClick={() => onChange({ headers: [...row.headers, { name: '', value: '' }] })}
        >
          Add header to URL {index + 1}
        </button>
        {props.onRemove && (
          <button type="button" className="secondary" onClick={props.onRemove}>
            Remove URL {index + 1}
          </button>
        )}
      </div>
    </div>
  )
}

function Created({ destination }: { destination: SavedDestination }) {
  return (
    <section>
      <h1>Webhooks saved</h1>
      <div className="card">
        <p>
          <strong>{destination.name}</strong> is{' '}
          {destination.enabled ? 'enabled: data is sent from now on.' : 'saved, disabled.'}
        </p>
        <ul>
          {destination.settings.webhooks.map((webhook, index) => {
            const warning = destination.warnings?.find(
              (each) => each.field === `/settings/webhooks/${index}/url`,
            )
            return (
              <li key={webhook.url}>
                URL {index + 1}: <code>{webhook.url}</code>
                {warning && (
                  <p className="warning" role="alert">
                    {warning.message}
                  </p>
                )}
              </li>
            )
          })}
        </ul>
        <TestEvent destinationId={destination.id} />
        <p>
          <Link to={`/destinations/${destination.id}`}>Open the destination</Link>
        </p>
      </div>
    </section>
  )
}
