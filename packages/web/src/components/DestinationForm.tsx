/**
 * The Webhooks form, for a new destination (Catalog → Webhooks) and for changing a saved one ("Edit"):
 * name, sources, up to 5 URLs each with static headers, the shared secret, enabled. When editing, the
 * form starts from the saved values; the secret is never shown, and left empty it stays as it is.
 * Every field shows the API's error about it, in the form's own words.
 */
import type { Destination, Replay, SavedDestination } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import {
  mappingProblem,
  type PolicyDraft,
  policyDraft,
  toBatchingSettings,
  toPolicySettings,
} from '../model/delivery-policy.ts'
import { Link } from '../ui/content.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { CheckboxList, TextField } from '../ui/fields.tsx'
import { Loading } from '../ui/lists.tsx'
import { DeliveryPolicyEditor } from './DeliveryPolicyEditor.tsx'

export const MAX_URLS = 5

const DAY_MS = 86_400_000

/** What "Also send the last N days" did after the save: the replay it started, or why it could not. */
export interface Backfill {
  days: number
  replay: Replay | null
  error: string | null
}

/**
 * Starts the replay of the last `days` days of the sources just connected; its refusal (a window
 * longer than the retention, say) is told on the destination's page, the destination being saved.
 */
async function backfill(destinationId: string, sourceIds: string[], days: number): Promise<Backfill> {
  const to = Date.now()
  try {
    const replay = await changes.startReplay(destinationId, {
      from: new Date(to - days * DAY_MS).toISOString(),
      to: new Date(to).toISOString(),
      sourceIds,
    })
    return { days, replay, error: null }
  } catch (error) {
    return { days, replay: null, error: error instanceof Error ? error.message : String(error) }
  }
}

interface HeaderRow {
  name: string
  value: string
}
interface UrlRow {
  url: string
  headers: HeaderRow[]
}

/** The saved URLs as the form edits them (header values are strings; the response types say unknown). */
function rowsOf(destination: Destination | undefined): UrlRow[] {
  if (!destination) return [{ url: '', headers: [] }]
  return destination.settings.webhooks.map((webhook) => ({
    url: webhook.url,
    headers: Object.entries(webhook.headers).map(([name, value]) => ({ name, value: String(value) })),
  }))
}

export function DestinationForm({
  destination,
  onSaved,
}: {
  /** The saved destination to change; none: a new one. */
  destination?: Destination
  /** `backfill`: when "Also send the last N days" was asked for, the replay it started. */
  onSaved: (saved: SavedDestination, backfill: Backfill | null) => void
}) {
  const queryClient = useQueryClient()
  const sources = useQuery(queries.sources())
  const editing = destination !== undefined
  const [name, setName] = useState(destination?.name ?? 'Webhooks')
  const [sourceIds, setSourceIds] = useState<string[]>(destination?.sourceIds ?? [])
  const [urls, setUrls] = useState<UrlRow[]>(() => rowsOf(destination))
  const [secret, setSecret] = useState('')
  const [removeSecret, setRemoveSecret] = useState(false)
  const [enabled, setEnabled] = useState(destination?.enabled ?? true)
  const [backfillDays, setBackfillDays] = useState('')
  const [standardWebhooks, setStandardWebhooks] = useState(
    destination?.settings.signing.standardWebhooks ?? false,
  )
  const [policy, setPolicy] = useState<PolicyDraft>(() => policyDraft(destination?.settings))
  const secretSet = destination?.settings.sharedSecretSet ?? false
  const formId = useId()
  const save = useMutation({
    mutationFn: async () => {
      const saved = await saveDestination()
      // Only the sources connected now: the others' calls were sent as they came.
      const added = sourceIds.filter((id) => !(destination?.sourceIds ?? []).includes(id))
      const days = Number(backfillDays)
      return {
        saved,
        backfill: days > 0 && added.length > 0 ? await backfill(saved.id, added, days) : null,
      }
    },
    onSuccess: ({ saved, backfill }) => {
      queryClient.setQueryData(keys.destination(saved.id), saved)
      void queryClient.invalidateQueries({ queryKey: keys.destinations })
      void queryClient.invalidateQueries({ queryKey: keys.replays(saved.id) })
      onSaved(saved, backfill)
    },
  })
  function saveDestination() {
    const webhooks = urls.map((row) => ({
      url: row.url.trim(),
      headers: Object.fromEntries(
        row.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value]),
      ),
    }))
    if (!editing) {
      return changes.createDestination({
        name,
        type: 'webhooks',
        enabled,
        sourceIds,
        settings: {
          webhooks,
          sharedSecret: secret === '' ? null : secret,
          ...(standardWebhooks ? { signing: { standardWebhooks } } : {}),
          ...toPolicySettings(policy, false),
          ...toBatchingSettings(policy, false),
        },
      })
    }
    // Left empty, the secret is not sent: the API keeps it.
    const sharedSecret = removeSecret ? { sharedSecret: null } : secret === '' ? {} : { sharedSecret: secret }
    return changes.updateDestination(destination.id, {
      name,
      enabled,
      sourceIds,
      settings: {
        webhooks,
        ...sharedSecret,
        signing: { standardWebhooks },
        ...toPolicySettings(policy, true),
        ...toBatchingSettings(policy, true),
      },
    })
  }
  const updateUrl = (index: number, change: Partial<UrlRow>) =>
    setUrls(urls.map((row, at) => (at === index ? { ...row, ...change } : row)))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    // A mapping that is not JSON is shown at its field; nothing is sent until it is.
    if (mappingProblem(policy.mapping) === null) save.mutate()
  }
  const error = save.error
  const part = (name: string) => `${formId}-${name}`
  return (
    <form
      onSubmit={submit}
      className="wizard"
      noValidate
      aria-label={editing ? 'Edit destination' : undefined}
    >
      <FormParts
        parts={[
          [part('name'), 'Name'],
          [part('sources'), 'Sources'],
          [part('urls'), 'URLs'],
          [part('signature'), 'Signature'],
          [part('enable'), 'Enable'],
          [part('gets'), 'What it gets'],
          [part('save'), 'Save'],
        ]}
      />
      <fieldset className="card" id={part('name')}>
        <legend>1. Name</legend>
        <TextField label="Destination name" value={name} onChange={setName} error={error} field="/name" />
      </fieldset>
      <CheckboxList
        id={part('sources')}
        legend="2. Sources"
        className="card"
        items={sources.data?.sources ?? []}
        chosen={sourceIds}
        onChange={setSourceIds}
        error={error}
        field="/sourceIds"
      >
        <p className="hint">The calls of the sources chosen are sent to this destination.</p>
        {sources.isPending && <Loading what="sources" />}
        {sources.data?.sources.length === 0 && (
          <p>
            No sources yet: <Link to="/sources">create one</Link> first.
          </p>
        )}
      </CheckboxList>
      <div className="card">
        <TextField
          label="Also send the last N days"
          type="number"
          value={backfillDays}
          onChange={setBackfillDays}
          hint={
            editing
              ? 'Optional. For the sources you connect now: their calls of the last N days are sent too, as a replay that lets live calls go first. Empty: only new calls.'
              : 'Optional. The calls these sources sent in the last N days are sent too, as a replay that lets live calls go first. Empty: only new calls.'
          }
        />
      </div>
      <fieldset className="card" id={part('urls')}>
        <legend>3. URLs (up to {MAX_URLS})</legend>
        <p className="hint">
          Each call goes to all these URLs at once, and is retried until one of them answers with 2xx. Headers
          are sent with their URL only.
        </p>
        {urls.map((row, index) => (
          <UrlEditor
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position.
            key={index}
            index={index}
            row={row}
            error={error}
            onChange={(change) => updateUrl(index, change)}
            onRemove={urls.length > 1 ? () => setUrls(urls.filter((_, at) => at !== index)) : undefined}
          />
        ))}
        <FieldError error={error} field="/settings/webhooks" exact label="URLs" />
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
      <fieldset className="card" id={part('signature')}>
        <legend>4. Signature</legend>
        <TextField
          label="Shared secret"
          type="password"
          autoComplete="new-password"
          value={secret}
          onChange={(value) => {
            setSecret(value)
            if (value !== '') setRemoveSecret(false)
          }}
          error={error}
          field="/settings/sharedSecret"
          hint={
            secretSet
              ? 'A secret is set and is not shown. Leave this empty to keep it, or type a new one to replace it.'
              : 'Optional. Each request then carries X-Signature: the hex HMAC-SHA1 of the body with this secret.'
          }
        />
        {secretSet && (
          <label className="check">
            <input
              type="checkbox"
              checked={removeSecret}
              onChange={(event) => {
                setRemoveSecret(event.target.checked)
                if (event.target.checked) setSecret('')
              }}
            />{' '}
            Remove the secret: send requests unsigned
          </label>
        )}
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            aria-checked={standardWebhooks}
            checked={standardWebhooks}
            onChange={(event) => setStandardWebhooks(event.target.checked)}
          />{' '}
          Standard Webhooks signature
        </label>
        <p className="hint">
          Each request also carries webhook-id, webhook-timestamp and webhook-signature, which receivers
          verify with the standardwebhooks or svix libraries. Sluice makes the secret when this is turned on
          and shows it once, after saving.
        </p>
      </fieldset>
      <fieldset className="card" id={part('enable')}>
        <legend>5. Enable</legend>
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.target.checked)} />{' '}
          Enabled: send data as soon as it is saved
        </label>
      </fieldset>
      <DeliveryPolicyEditor
        id={part('gets')}
        draft={policy}
        onChange={setPolicy}
        error={error}
        sourceIds={sourceIds}
      />
      <ErrorBox error={error} fields={['/name', '/sourceIds', '/settings']} />
      <div className="row-actions" id={part('save')}>
        <button type="submit" disabled={save.isPending}>
          {editing ? 'Save changes' : 'Save destination'}
        </button>
        {editing && (
          <Link to={`/destinations/${destination.id}`} className="button secondary">
            Cancel
          </Link>
        )}
      </div>
    </form>
  )
}

/**
 * On a phone, the form's parts as buttons that scroll to each: the form is several screens long.
 * Buttons, not links to fragments: a fragment would be a navigation, and the form keeps what was typed.
 */
function FormParts({ parts }: { parts: [id: string, label: string][] }) {
  return (
    <nav className="form-parts" aria-label="Parts of the form">
      {parts.map(([id, label]) => (
        <button
          key={id}
          type="button"
          className="secondary"
          onClick={() => {
            const target = document.getElementById(id)
            target?.scrollIntoView({ block: 'start' })
            target
              ?.querySelector<HTMLElement>('input, textarea, select, button')
              ?.focus({ preventScroll: true })
          }}
        >
          {label}
        </button>
      ))}
    </nav>
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
      <FieldError error={error} field={`${field}/headers`} label={`The headers of URL ${index + 1}`} />
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
