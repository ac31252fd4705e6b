import type { Audience } from '@sluice/server/api'
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query'
import { ApiError } from '../api/client.ts'
import { changes, keys, queries } from '../api/queries.ts'
import { AudienceForm } from '../components/AudienceForm.tsx'
import { ComputationState } from '../components/ComputationState.tsx'
import { MemberName } from '../components/MemberName.tsx'
import { navigate } from '../router.ts'
import { useCanWrite } from '../session.ts'
import { CodeBlock, formatTime, Link } from '../ui/content.tsx'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { EmptyState, Loading } from '../ui/lists.tsx'
import { NotFound } from './NotFound.tsx'

/** Members per page of the list. */
const MEMBERS_PER_PAGE = 25

/** `/audiences/:id`: the audience in the builder (admins change it there), and its members. */
export function AudienceView({ id }: { id: string }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const audience = useQuery({
    ...queries.audience(id),
    refetchInterval: (query) => (query.state.data?.status === 'computing' ? 1_500 : 5_000),
  })
  const destinations = useQuery(queries.destinations())
  if (audience.isPending) return <Loading what="the audience" />
  if (audience.error instanceof ApiError && audience.error.status === 404) {
    return <NotFound what="Audience" back={{ to: '/audiences', label: 'Back to Audiences' }} />
  }
  if (audience.error) return <ErrorBox error={audience.error} />
  const { data } = audience
  return (
    <section>
      <p>
        <Link to="/audiences">← Audiences</Link>
      </p>
      <div className="page-head">
        <h1>{data.name}</h1>
        {canWrite && (
          <ConfirmButton
            label="Delete audience"
            title={`Delete the audience ${data.name}?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              await changes.deleteAudience(id)
              queryClient.removeQueries({ queryKey: keys.audience(id) })
              await queryClient.invalidateQueries({ queryKey: keys.audiences })
              navigate('/audiences')
            }}
          >
            <p>Its memberships are deleted; destinations are sent nothing more about it.</p>
          </ConfirmButton>
        )}
      </div>
      <dl className="stats">
        <div>
          <dt>Status</dt>
          <dd>
            <ComputationState status={data.status} error={data.error} />
          </dd>
        </div>
        <div>
          <dt>Members</dt>
          <dd>{data.size.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Last sync</dt>
          <dd className="small">{formatTime(data.lastSyncAt)}</dd>
        </div>
        <div>
          <dt>Trait key</dt>
          <dd className="small">
            <code>{data.key}</code>
          </dd>
        </div>
      </dl>
      {canWrite ? (
        <AudienceForm
          key={data.updatedAt}
          audience={data}
          destinations={destinations.data?.destinations ?? []}
          onSaved={(saved) => queryClient.setQueryData(keys.audience(id), saved)}
        />
      ) : (
        <div className="card">
          <h2>Definition</h2>
          <CodeBlock label="Definition">{JSON.stringify(data.definition, null, 2)}</CodeBlock>
        </div>
      )}
      <Members audience={data} />
    </section>
  )
}

function Members({ audience }: { audience: Audience }) {
  const members = useInfiniteQuery({
    ...queries.audienceMembers(audience.id, MEMBERS_PER_PAGE),
    refetchInterval: audience.status === 'computing' ? 1_500 : 10_000,
  })
  const list = members.data?.pages.flatMap((page) => page.members) ?? []
  return (
    <div className="card">
      <h2 id="members-heading">Members</h2>
      <ErrorBox error={members.error} />
      {members.isPending ? (
        <Loading what="members" />
      ) : list.length === 0 ? (
        <EmptyState title={audience.status === 'computing' ? 'Computing members…' : 'No members yet.'}>
          Profiles enter as soon as their calls match the definition.
        </EmptyState>
      ) : (
        <>
          <ul aria-labelledby="members-heading" className="member-list">
            {list.map((member) => (
              <li key={member.profileId}>
                <MemberName member={member} />
              </li>
            ))}
          </ul>
          <p className="pager">
            <span className="muted">
              {list.length.toLocaleString()} of {audience.size.toLocaleString()} shown
            </span>
            {members.hasNextPage && (
              <button
                type="button"
                className="secondary"
                disabled={members.isFetchingNextPage}
                onClick={() => void members.fetchNextPage()}
              >
                Show more members
              </button>
            )}
          </p>
        </>
      )}
    </div>
  )
}
