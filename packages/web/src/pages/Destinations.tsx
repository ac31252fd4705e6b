import { useQuery } from '@tanstack/react-query'
import { queries } from '../api/queries.ts'
import { useCanWrite } from '../session.ts'
import { Link } from '../ui/content.tsx'
import { EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

export function Destinations() {
  const canWrite = useCanWrite()
  const destinations = useQuery({ ...queries.destinations(), refetchInterval: 5_000 })
  const sources = useQuery(queries.sources())
  const sourceNames = (ids: string[]) =>
    ids.length === 0
      ? 'None'
      : ids.map((id) => sources.data?.sources.find((source) => source.id === id)?.name ?? id).join(', ')
  return (
    <section>
      <h1>Destinations</h1>
      {canWrite && (
        <p>
          <Link to="/catalog/webhooks" className="button">
            Add Webhooks
          </Link>
        </p>
      )}
      <ListStates
        pending={destinations.isPending}
        error={destinations.error}
        items={destinations.data?.destinations}
        what="destinations"
        empty={
          <EmptyState title="No destinations yet.">
            A destination gets the calls of the sources connected to it.{' '}
            {canWrite ? 'Add Webhooks to send them to your own URLs.' : 'An admin can add one.'}
          </EmptyState>
        }
      >
        <TableScroll label="Destination list">
          <table>
            <caption className="visually-hidden">Destinations with their delivery counts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Sources</th>
                <th scope="col" className="num">
                  Delivered
                </th>
                <th scope="col" className="num">
                  Retrying
                </th>
                <th scope="col" className="num">
                  Failed
                </th>
              </tr>
            </thead>
            <tbody>
              {destinations.data?.destinations.map((destination) => (
                <tr key={destination.id}>
                  <td>
                    <Link to={`/destinations/${destination.id}`}>{destination.name}</Link>
                  </td>
                  <td>{destination.enabled ? 'Enabled' : 'Disabled'}</td>
                  <td>{sourceNames(destination.sourceIds)}</td>
                  <td className="num">{destination.stats.delivered.toLocaleString()}</td>
                  <td className="num">{destination.stats.retrying.toLocaleString()}</td>
                  <td className="num">{destination.stats.failed.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
    </section>
  )
}
