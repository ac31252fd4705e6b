import { TOKEN_ROLES, type TokenRole } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { CopyButton, formatTime } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { Select, TextField } from '../ui/fields.tsx'
import { ListStates } from '../ui/lists.tsx'

/** The roles a new token may get; viewer, the least power, first and chosen. */
const ROLES = ['viewer', ...TOKEN_ROLES.filter((role) => role !== 'viewer')] as const

export function Access() {
  const queryClient = useQueryClient()
  const tokens = useQuery(queries.tokens())
  const [name, setName] = useState('')
  const [role, setRole] = useState<TokenRole>('viewer')
  const create = useMutation({
    mutationFn: () => changes.createToken({ name, role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.tokens }),
  })
  const revoke = useMutation({
    mutationFn: changes.revokeToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.tokens }),
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
        <Select label="Role" value={role} options={ROLES} onChange={setRole} />
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
      <ListStates
        pending={tokens.isPending}
        error={tokens.error ?? revoke.error}
        items={tokens.data?.tokens}
        what="tokens"
      >
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
      </ListStates>
    </section>
  )
}
