import { useQuery } from '@tanstack/react-query'
import { type Destination, get } from '../api.ts'
import { useCanWrite } from '../session.ts'
import { ErrorBox, Link, Loading } from '../ui.tsx'

export function Destinations() {
  const canWrite = useCanWrite()
  const destinations = useQuery({
    queryKey: ['destinations'],
    queryFn: () => get<{ destinations: Destination[] }>('/destinations'),
    refetchInterval: 5_000,
  })
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
      <ErrorBox error={destinations.error} />
      {destinations.isPending ? (
        <Loading what="destinations" />
      ) : destinations.data?.destinations.length === 0 ? (
        <p className="card">No destinations yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Destinations with their delivery counts</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
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
                <td className="num">{destination.stats.delivered.toLocaleString()}</td>
                <td className="num">{destination.stats.retrying.toLocaleString()}</td>
                <td className="num">{destination.stats.failed.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
