import type { Destination } from '@sluice/server/api'
import { CheckboxList } from '../ui/fields.tsx'

/** The destinations an audience or computed trait syncs to, as checkboxes, with the API's error about them. */
export function DestinationChoice({
  destinations,
  chosen,
  onChange,
  error,
}: {
  destinations: Destination[]
  chosen: string[]
  onChange: (ids: string[]) => void
  error: unknown
}) {
  return (
    <CheckboxList
      legend="Destinations"
      items={destinations}
      chosen={chosen}
      onChange={onChange}
      error={error}
      field="/destinationIds"
    >
      {destinations.length === 0 && <p className="hint">No destinations yet.</p>}
    </CheckboxList>
  )
}
