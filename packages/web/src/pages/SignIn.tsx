import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'

export function SignIn() {
  const [token, setToken] = useState('')
  const queryClient = useQueryClient()
  const signIn = useMutation({
    mutationFn: () => changes.signIn({ token }),
    onSuccess: (session) => queryClient.setQueryData(keys.session, session),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    signIn.mutate()
  }
  return (
    <main className="sign-in">
      <h1>Sign in to Sluice</h1>
      <form onSubmit={submit} className="card">
        <TextField
          label="Access token"
          type="password"
          autoComplete="current-password"
          value={token}
          onChange={setToken}
          error={signIn.error}
          field="/token"
          hint="The admin token Sluice printed at its first start (or SLUICE_ADMIN_TOKEN), or a token an admin created for you."
        />
        <ErrorBox error={signIn.error} fields={['/token']} />
        <button type="submit" disabled={signIn.isPending}>
          Sign in
        </button>
      </form>
    </main>
  )
}
