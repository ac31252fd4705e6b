import { NotYet } from './NotYet.tsx'

export function Audiences() {
  return (
    <NotYet title="Audiences">
      Audiences and computed traits (definitions, preview, size, syncs to destinations) and profile lookup are
      not in the web app yet: use the management API (`/api/v1/audiences`, `/api/v1/computed-traits`,
      `/api/v1/profiles`) or `sluice audiences`.
    </NotYet>
  )
}
