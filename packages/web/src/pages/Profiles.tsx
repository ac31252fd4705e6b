import { useQuery } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { queries } from '../api/queries.ts'
import { MemberName } from '../components/MemberName.tsx'
import { ProfileLookup } from '../components/ProfileLookup.tsx'
import { useSearch } from '../router.ts'
import { TextField } from '../ui/fields.tsx'
import { ListStates } from '../ui/lists.tsx'

/** Profiles found by part of an id, and a profile by user id or anonymous id, with its calls. */
export function Profiles() {
  const search = useSearch()
  return (
    <section>
      <h1>Profiles</h1>
      <p className="muted">
        A profile gathers the calls of one person across sources: a call carrying both a userId and an
        anonymousId links them, and an alias merges two.
      </p>
      <ProfileSearch />
      {/* A found profile's link changes the address: the lookup starts again from it. */}
      <ProfileLookup key={search} withEvents />
    </section>
  )
}

function ProfileSearch() {
  const [text, setText] = useState('')
  const [searched, setSearched] = useState('')
  const found = useQuery({ ...queries.profileSearch(searched), enabled: searched !== '', retry: false })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSearched(text.trim())
  }
  const profiles = found.data?.profiles
  return (
    <div className="card">
      <form onSubmit={submit} className="inline-form" aria-label="Profile search" noValidate>
        <TextField
          label="Search profiles"
          hint="Part of a user id or anonymous id, e.g. 42 or @example.com."
          value={text}
          onChange={setText}
          error={found.error}
          field="/q"
        />
        <button type="submit">Search</button>
      </form>
      {searched !== '' && (
        <ListStates
          pending={found.isPending}
          error={null}
          items={profiles}
          what="profiles"
          empty={<p role="status">No profile has an id containing “{searched}”.</p>}
        >
          <ul aria-label="Profiles found" className="member-list spaced-list">
            {profiles?.map((profile) => (
              <li key={profile.profileId}>
                <MemberName member={profile} />
              </li>
            ))}
          </ul>
        </ListStates>
      )}
    </div>
  )
}
