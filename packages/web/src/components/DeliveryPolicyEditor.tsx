/**
 * "What this destination gets": the subscription (Segment's syntax), the filters, the mapping of the
 * body and the method, with a dry run over the sources' recent calls that shows the counts and a
 * sample body. Errors, the API's or the mapping's JSON, are shown at their field.
 */
import { FILTER_ACTIONS, WEBHOOK_METHODS } from '@sluice/server/api'
import { useMutation } from '@tanstack/react-query'
import { useId } from 'react'
import { errorConcerns } from '../api/client.ts'
import { changes } from '../api/queries.ts'
import {
  emptyFilter,
  FILTER_ACTION_LABELS,
  type FilterDraft,
  mappingProblem,
  type PolicyDraft,
  toPolicySettings,
} from '../model/delivery-policy.ts'
import { CodeBlock } from '../ui/content.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { SelectField, TextField } from '../ui/fields.tsx'

/** At most this many filters per destination. */
const MAX_FILTERS = 10

export function DeliveryPolicyEditor({
  id: fieldsetId,
  draft,
  onChange,
  error,
  sourceIds,
}: {
  /** The fieldset's id, e.g. for a link that scrolls to it. */
  id?: string
  draft: PolicyDraft
  onChange: (draft: PolicyDraft) => void
  /** The save's error: shown at the field it points at. */
  error: unknown
  /** The sources whose recent calls the dry run reads. */
  sourceIds: string[]
}) {
  const id = useId()
  const dryRun = useMutation({
    mutationFn: () => changes.dryRun({ sourceIds, settings: toPolicySettings(draft, false), limit: 1000 }),
  })
  const problem = mappingProblem(draft.mapping)
  // The dry run's refusal is about the same fields as the save's: shown the same way.
  const shownError = dryRun.error ?? error
  const set = (change: Partial<PolicyDraft>) => {
    dryRun.reset()
    onChange({ ...draft, ...change })
  }
  const setFilter = (index: number, change: Partial<FilterDraft>) =>
    set({ filters: draft.filters.map((filter, at) => (at === index ? { ...filter, ...change } : filter)) })
  const mappingFailed = problem !== null || errorConcerns(shownError, '/settings/mapping')
  return (
    <fieldset className="card" id={fieldsetId}>
      <legend>6. What this destination gets</legend>
      <p className="hint">
        All optional. Without them every call of the sources is sent, in the documented shape, with POST.
      </p>
      <div className="field">
        <label htmlFor={`${id}-subscription`}>Subscription</label>
        <textarea
          id={`${id}-subscription`}
          rows={2}
          value={draft.subscription}
          placeholder={'type = "track" and event = "Order Completed"'}
          aria-invalid={errorConcerns(shownError, '/settings/subscription') || undefined}
          onChange={(event) => set({ subscription: event.target.value })}
        />
        <p className="hint">
          Which calls it gets, in Segment's subscription syntax: <code>{'properties.total >= 100'}</code>,{' '}
          <code>{'match(event, "Order*")'}</code>, <code>userId != null</code>. Empty: every call.
        </p>
        <FieldError error={shownError} field="/settings/subscription" label="Subscription" />
      </div>

      <h3 className="subhead">Filters</h3>
      {draft.filters.length === 0 && (
        <p className="hint">No filters: every call the subscription lets in is sent.</p>
      )}
      <ol className="filter-list">
        {draft.filters.map((filter, index) => {
          const at = `/settings/filters/${index}`
          const label = `filter ${index + 1}`
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: filters have no identity but their position.
            <li key={index} className="filter-row">
              <TextField
                label={`Applies to (${label})`}
                value={filter.if}
                placeholder="every call"
                onChange={(value) => setFilter(index, { if: value })}
                error={shownError}
                field={`${at}/if`}
              />
              <SelectField
                label={`Action (${label})`}
                value={filter.action}
                options={FILTER_ACTIONS}
                optionLabel={(action) => FILTER_ACTION_LABELS[action]}
                onChange={(action) => setFilter(index, { action })}
                error={shownError}
                field={`${at}/action`}
              />
              {filter.action === 'sample' && (
                <TextField
                  label={`Percent kept (${label})`}
                  value={filter.percent}
                  onChange={(value) => setFilter(index, { percent: value })}
                  error={shownError}
                  field={`${at}/percent`}
                />
              )}
              {(filter.action === 'dropFields' || filter.action === 'allowFields') && (
                <TextField
                  label={`Fields (${label})`}
                  value={filter.fields}
                  placeholder="properties.email, context.ip"
                  onChange={(value) => setFilter(index, { fields: value })}
                  error={shownError}
                  field={`${at}/fields`}
                />
              )}
              <button
                type="button"
                className="link"
                onClick={() => set({ filters: draft.filters.filter((_, at) => at !== index) })}
              >
                Remove filter {index + 1}
              </button>
              <FieldError error={shownError} field={at} exact label={`Filter ${index + 1}`} />
            </li>
          )
        })}
      </ol>
      {draft.filters.length < MAX_FILTERS && (
        <button
          type="button"
          className="secondary"
          onClick={() => set({ filters: [...draft.filters, emptyFilter()] })}
        >
          Add filter
        </button>
      )}

      <h3 className="subhead">Body and method</h3>
      <div className="field">
        <label htmlFor={`${id}-mapping`}>Mapping (JSON)</label>
        <textarea
          id={`${id}-mapping`}
          rows={6}
          className="code-input"
          value={draft.mapping}
          placeholder={'{\n  "name": { "@path": "$.event" },\n  "user": { "@path": "$.userId" }\n}'}
          aria-invalid={mappingFailed || undefined}
          onChange={(event) => set({ mapping: event.target.value })}
        />
        <p className="hint">
          Segment's mapping language (<code>@path</code>, <code>@template</code>, <code>@if</code>, …); its
          result is the body. Empty: the documented shape.
        </p>
        {problem ? (
          <p className="field-error" role="alert">
            {problem}
          </p>
        ) : (
          <FieldError error={shownError} field="/settings/mapping" label="Mapping" />
        )}
      </div>
      <SelectField
        label="Method"
        value={draft.method}
        options={WEBHOOK_METHODS}
        onChange={(method) => set({ method })}
        error={shownError}
        field="/settings/method"
      />

      <h3 className="subhead">Batching</h3>
      <label className="check">
        <input
          type="checkbox"
          checked={draft.batching.on}
          onChange={(event) => set({ batching: { ...draft.batching, on: event.target.checked } })}
        />{' '}
        Send several calls per request, as a JSON array
      </label>
      <p className="hint">
        A batch goes when it holds the most calls or bytes below, or when its oldest call has waited that
        long; it is signed, retried and dead-lettered as one request.
      </p>
      {draft.batching.on && (
        <>
          <TextField
            label="Most calls per request (1 to 1,000)"
            type="number"
            value={draft.batching.maxEvents}
            onChange={(maxEvents) => set({ batching: { ...draft.batching, maxEvents } })}
            error={error}
            field="/settings/batching/maxEvents"
          />
          <TextField
            label="Most bytes per request (up to 512,000)"
            type="number"
            value={draft.batching.maxBytes}
            onChange={(maxBytes) => set({ batching: { ...draft.batching, maxBytes } })}
            error={error}
            field="/settings/batching/maxBytes"
          />
          <TextField
            label="Longest wait for a batch to fill, in ms (0 to 60,000)"
            type="number"
            value={draft.batching.maxWaitMs}
            onChange={(maxWaitMs) => set({ batching: { ...draft.batching, maxWaitMs } })}
            error={error}
            field="/settings/batching/maxWaitMs"
          />
        </>
      )}

      <div className="row-actions">
        <button
          type="button"
          className="secondary"
          disabled={dryRun.isPending || problem !== null || sourceIds.length === 0}
          onClick={() => dryRun.mutate()}
        >
          Try on recent calls
        </button>
        {sourceIds.length === 0 && <span className="hint">Choose a source first: its calls are tried.</span>}
      </div>
      <ErrorBox
        error={dryRun.error}
        fields={['/settings/subscription', '/settings/filters', '/settings/mapping', '/settings/method']}
      />
      {dryRun.data && (
        <div role="status" className="preview" aria-label="Dry run">
          <p>
            Of the last <strong>{dryRun.data.scanned.toLocaleString()}</strong> calls,{' '}
            <strong>{dryRun.data.matched.toLocaleString()}</strong> would be sent,{' '}
            {dryRun.data.filtered.toLocaleString()} filtered out and {dryRun.data.sampledOut.toLocaleString()}{' '}
            sampled out
            {dryRun.data.failed > 0
              ? `; ${dryRun.data.failed.toLocaleString()} would fail their mapping`
              : ''}
            .
          </p>
          {dryRun.data.samples[0] && (
            <CodeBlock label="Sample body">
              {dryRun.data.samples[0].error ?? JSON.stringify(dryRun.data.samples[0].body, null, 2)}
            </CodeBlock>
          )}
        </div>
      )}
    </fieldset>
  )
}
