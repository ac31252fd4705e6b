import { useInfiniteQuery, useQuery } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { queries } from '../api/queries.ts'
import { formatTime } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { SelectField, TextField } from '../ui/fields.tsx'
import { ListStates, Loading, TableScroll } from '../ui/lists.tsx'

const IDENTITIES = [
  { param: 'userId', label: 'User ID' },
  { param: 'anonymousId', label: 'Anonymous ID' },
] as const

type Identity = (typeof IDENTITIES)[number]

const byParam = (param: Identity['param']): Identity =>
  IDENTITIES.find((each) => each.param === param) ?? IDENTITIES[0]

const plural = (count: number, one: string, many: string) =>
  `${count.toLocaleString()} ${count === 1 ? one : many}`

/** Calls per page of the profile's calls. */
const EVENTS_PER_PAGE = 25

/** The identity in the address (`?userId=…` or `?anonymousId=…`), so that a lookup can be linked to. */
function fromAddress(): { identity: Identity; value: string } {
  const query = new URLSearchParams(location.search)
  for (const identity of IDENTITIES) {
    const value = query.get(identity.param)
    if (value) return { identity, value }
  }
  return { identity: IDENTITIES[0], value: '' }
}

/**
 * A profile looked up by user id or anonymous id: its identities, audiences, traits and computed traits,
 * and (`withEvents`) its calls, newest first, a page at a time.
 */
export function ProfileLookup({ withEvents = false }: { withEvents?: boolean }) {
  const initial = withEvents ? fromAddress() : { identity: IDENTITIES[0], value: '' }
  const [identity, setIdentity] = useState<Identity>(initial.identity)
  const [value, setValue] = useState(initial.value)
  const [looked, setLooked] = useState<{ identity: Identity; value: string } | null>(
    initial.value === '' ? null : initial,
  )
  const profile = useQuery({
    ...queries.profile(looked === null ? {} : { [looked.identity.param]: looked.value }),
    enabled: looked !== null,
    retry: false,
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const next = { identity, value: value.trim() }
    if (next.value === '') return
    if (looked?.identity === next.identity && looked.value === next.value) void profile.refetch()
    else setLooked(next)
    if (withEvents) {
      history.replaceState(
        null,
        '',
        `${location.pathname}?${new URLSearchParams({ [identity.param]: next.value })}`,
      )
    }
  }
  const notFound = profile.error instanceof ApiError && profile.error.status === 404
  return (
    <div className="card">
      <form onSubmit={submit} className="inline-form" aria-label="Profile lookup">
        <SelectField
          label="Look up by"
          value={identity.param}
          options={IDENTITIES.map((each) => each.param)}
          optionLabel={(param) => byParam(param).label}
          onChange={(param) => setIdentity(byParam(param))}
        />
        <TextField label={identity.label} value={value} onChange={setValue} />
        <button type="submit">Look up</button>
      </form>
      {profile.isFetching && <Loading what="the profile" />}
      {notFound && looked ? (
        <p role="status">
          No profile has the {looked.identity.label.toLowerCase()} {looked.value}.
        </p>
      ) : (
        <ErrorBox error={profile.error} />
      )}
      {profile.data && !profile.isFetching && (
        <section aria-label="Profile" className="profile">
          <p>
            <code>{profile.data.id}</code> — user ids {profile.data.userIds.join(', ') || 'none'}; anonymous
            ids {profile.data.anonymousIds.join(', ') || 'none'}; seen {formatTime(profile.data.firstSeenAt)}{' '}
            to {formatTime(profile.data.lastSeenAt)}.
          </p>
          <h3>Audiences</h3>
          {profile.data.audiences.length === 0 ? (
            <p className="muted">In no audience.</p>
          ) : (
            <ul aria-label="Audiences of the profile">
              {profile.data.audiences.map((key) => (
                <li key={key}>
                  <code>{key}</code>
                </li>
              ))}
            </ul>
          )}
          <div className="two-columns">
            <TraitTable
              title="Traits"
              traits={profile.data.traits}
              empty="No traits: identify calls set them."
            />
            <TraitTable
              title="Computed traits"
              traits={profile.data.computedTraits}
              empty="No computed trait has a value for this profile."
            />
          </div>
          {withEvents && <ProfileEvents profileId={profile.data.id} />}
        </section>
      )}
    </div>
  )
}

/** A value as a person reads it: text as is, numbers and booleans plainly, objects and lists as JSON. */
export function readableValue(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return value.toLocaleString()
  if (value === null || value === undefined) return '—'
  return typeof value === 'boolean' ? (value ? 'true' : 'false') : JSON.stringify(value)
}

/** Traits (or computed traits) as a two-column table, name and value. */
function TraitTable({ title, traits, empty }: { title: string; traits: object; empty: string }) {
  const entries = Object.entries(traits).sort(([a], [b]) => a.localeCompare(b))
  return (
    <section aria-label={title} className="trait-table">
      <h3>{title}</h3>
      {entries.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <table>
          <caption className="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">
                  <code>{name}</code>
                </th>
                <td className="cell-id">{readableValue(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/**
 * A page or screen call's name, where a profile keeps it: browser SDKs copy a page's name into its
 * properties (`properties.name`). A profile's own `event` names track calls only.
 */
function viewName(call: { type: string; properties: Record<string, unknown> }): string | undefined {
  const name = call.properties.name
  return (call.type === 'page' || call.type === 'screen') && typeof name === 'string' && name !== ''
    ? name
    : undefined
}

/** The profile's calls, newest first; "Load older calls" fetches the next page. */
function ProfileEvents({ profileId }: { profileId: string }) {
  const sources = useQuery(queries.sources())
  const events = useInfiniteQuery(queries.profileEvents(profileId, EVENTS_PER_PAGE))
  const sourceName = (sourceId: string) =>
    sources.data?.sources.find((source) => source.id === sourceId)?.name ?? sourceId
  const list = events.data?.pages.flatMap((page) => page.events) ?? []
  return (
    <>
      <h3>Calls</h3>
      <ListStates
        pending={events.isPending}
        error={events.error}
        items={list}
        what="the calls"
        empty={<p className="muted">No calls stored for this profile.</p>}
      >
        <TableScroll label="Calls of the profile">
          <table>
            <caption className="visually-hidden">Calls of the profile, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Event or name</th>
                <th scope="col">Source</th>
                <th scope="col">Message ID</th>
                <th scope="col">Properties</th>
              </tr>
            </thead>
            <tbody>
              {list.map((event) => (
                <tr key={`${event.sourceId}/${event.messageId}`}>
                  <td>{formatTime(event.timestamp)}</td>
                  <td>{event.type}</td>
                  <td>{event.event ?? viewName(event) ?? '—'}</td>
                  <td>{sourceName(event.sourceId)}</td>
                  <td>
                    <code>{event.messageId}</code>
                  </td>
                  <td>
                    {Object.keys(event.properties).length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      <details>
                        <summary>
                          <span className="visually-hidden">Properties of {event.messageId}: </span>
                          {plural(Object.keys(event.properties).length, 'property', 'properties')}
                        </summary>
                        <pre className="code">{JSON.stringify(event.properties, null, 2)}</pre>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
      <div className="pager">
        <span className="muted" role="status">
          {plural(list.length, 'call', 'calls')} shown
          {events.hasNextPage ? '; older ones remain' : ''}.
        </span>
        {events.hasNextPage && (
          <button
            type="button"
            className="secondary"
            disabled={events.isFetchingNextPage}
            onClick={() => void events.fetchNextPage()}
          >
            Load older calls
          </button>
        )}
      </div>
    </>
  )
}
