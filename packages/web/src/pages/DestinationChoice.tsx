import type { Destination } from '../api.ts'
import { FieldError } from '../ui.tsx'

/** Destinations to sync to, as checkboxes, with the API's error about them. */
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
    <fieldset className="plain-fieldset">
      <legend>Destinations</legend>
      {destinations.length === 0 && <p className="hint">No destinations yet.</p>}
      {destinations.map((destination) => (
        <label key={destination.id} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(destination.id)}
            onChange={(event) =>
              onChange(
                event.target.checked
                  ? [...chosen, destination.id]
                  : chosen.filter((id) => id !== destination.id),
              )
            }
          />{' '}
          {destination.name}
        </label>
      ))}
      <FieldError error={error} field="/destinationIds" />
    </fieldset>
  )
}
