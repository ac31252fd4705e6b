import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { type AccessToken, api, get } from '../api.ts'
import { CopyButton, ErrorBox, formatTime, Loading, TextField } from '../ui.tsx'

export function Access() {
  const queryClient = useQueryClient()
  const tokens = useQuery({ queryKey: ['tokens'], queryFn: () => get<{ tokens: AccessToken[] }>('/tokens') })
  const [name, setName] = useState('')
  const [role, setRole] = useState<'admin' | 'viewer'>('viewer')
  const create = useMutation({
    mutationFn: () => api<AccessToken & { token: string }>('POST', '/tokens', { name, role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['tokens'] }),
  })
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/tokens/${id}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['tokens'] }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <section>
      <h1>Access</h1>
      <p className="muted">
        Tokens for people and scripts. Admins may change everything; viewers read everything but secrets.
      </p>
      <form className="card inline-form" onSubmit={submit} aria-label="Create a token">
        <TextField label="Token name" value={name} onChange={setName} error={create.error} field="/name" />
        <div className="field">
          <label>
            Role
            <select value={role} onChange={(event) => setRole(event.target.value as 'admin' | 'viewer')}>
              <option value="viewer">viewer</option>
              <option value="admin">admin</option>
            </select>
          </label>
        </div>
        <button type="submit" disabled={create.isPending}>
          Create token
        </button>
        <ErrorBox error={create.error} fields={['/name']} />
      </form>
      {create.data && (
        <div className="card notice" role="status">
          <p>
            Token for <strong>{create.data.name}</strong> — shown only now:
          </p>
          <p className="key-row">
            <code className="new-token">{create.data.token}</code> <CopyButton text={create.data.token} />
          </p>
        </div>
      )}
      <ErrorBox error={tokens.error ?? revoke.error} />
      {tokens.isPending ? (
        <Loading what="tokens" />
      ) : (
        <table>
          <caption className="visually-hidden">Access tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data?.tokens.map((token) => (
              <tr key={token.id}>
                <td>{token.name}</td>
                <td>{token.role}</td>
                <td>{formatTime(token.createdAt)}</td>
                <td>{formatTime(token.lastUsedAt)}</td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    onClick={() => {
                      if (confirm(`Revoke "${token.name}"? It stops working within seconds.`))
                        revoke.mutate(token.id)
                    }}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
