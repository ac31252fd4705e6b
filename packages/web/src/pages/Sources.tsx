import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { navigate } from '../router.ts'
import { useCanWrite } from '../session.ts'
import { Link } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'
import { EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

export function Sources() {
  const canWrite = useCanWrite()
  const sources = useQuery({ ...queries.sources(), refetchInterval: 5_000 })
  return (
    <section>
      <h1>Sources</h1>
      <p className="muted">Where calls come from. Each source has its own write key.</p>
      {canWrite && <CreateSource />}
      <ListStates
        pending={sources.isPending}
        error={sources.error}
        items={sources.data?.sources}
        what="sources"
        empty={
          <EmptyState title="No sources yet.">
            A source is an app or site that sends calls with its own write key.{' '}
            {canWrite ? 'Name one above to get its key.' : 'An admin can create one.'}
          </EmptyState>
        }
      >
        <TableScroll label="Source list">
          <table>
            <caption className="visually-hidden">Sources with their counts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Accepted
                </th>
                <th scope="col" className="num">
                  Rejected
                </th>
                <th scope="col" className="num">
                  Duplicates
                </th>
              </tr>
            </thead>
            <tbody>
              {sources.data?.sources.map((source) => (
                <tr key={source.id}>
                  <td>
                    <Link to={`/sources/${source.id}`}>{source.name}</Link>
                  </td>
                  <td>{source.enabled ? 'Enabled' : 'Disabled'}</td>
                  <td className="num">{source.stats.accepted.toLocaleString()}</td>
                  <td className="num">{source.stats.rejected.toLocaleString()}</td>
                  <td className="num">{source.stats.duplicates.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
    </section>
  )
}

function CreateSource() {
  const [name, setName] = useState('')
  const queryClient = useQueryClient()
  const create = useMutation({
    mutationFn: () => changes.createSource({ name }),
    onSuccess: (source) => {
      void queryClient.invalidateQueries({ queryKey: keys.sources })
      navigate(`/sources/${source.id}`)
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Create a source">
      <TextField label="Source name" value={name} onChange={setName} error={create.error} field="/name" />
      <button type="submit" disabled={create.isPending}>
        Create source
      </button>
      <ErrorBox error={create.error} fields={['/name']} />
    </form>
  )
}
