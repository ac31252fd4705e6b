import { ProfileLookup } from '../components/ProfileLookup.tsx'

/** A profile by user id or anonymous id, with its calls. */
export function Profiles() {
  return (
    <section>
      <h1>Profiles</h1>
      <p className="muted">
        A profile gathers the calls of one person across sources: a call carrying both a userId and an
        anonymousId links them, and an alias merges two.
      </p>
      <ProfileLookup withEvents />
    </section>
  )
}
