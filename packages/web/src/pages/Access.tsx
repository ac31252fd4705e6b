import { TOKEN_ROLES, type TokenRole } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { useCanWrite } from '../session.ts'
import { CopyButton, formatTime } from '../ui/content.tsx'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { Select, TextField } from '../ui/fields.tsx'
import { AdminOnly, EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

/** The roles a new token may get; viewer, the least power, first and chosen. */
const ROLES = ['viewer', ...TOKEN_ROLES.filter((role) => role !== 'viewer')] as const

export function Access() {
  const canWrite = useCanWrite()
  return (
    <section>
      <h1>Access</h1>
      <p className="muted">
        Tokens for people and scripts. Admins may change everything; viewers read everything but secrets.
      </p>
      {canWrite ? <Tokens /> : <AdminOnly what="Managing access tokens" />}
    </section>
  )
}

function Tokens() {
  const queryClient = useQueryClient()
  const tokens = useQuery(queries.tokens())
  const [name, setName] = useState('')
  const [role, setRole] = useState<TokenRole>('viewer')
  const create = useMutation({
    mutationFn: () => changes.createToken({ name, role }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.tokens }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <>
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
        error={tokens.error}
        items={tokens.data?.tokens}
        what="tokens"
        empty={
          <EmptyState title="No access tokens yet.">
            Sluice's admin token signs in today. Create a viewer token above for someone who should look
            without changing anything, or an admin token for a script.
          </EmptyState>
        }
      >
        <TableScroll label="Access token list">
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
                    <ConfirmButton
                      label="Revoke"
                      accessibleLabel={`Revoke ${token.name}`}
                      title={`Revoke the token ${token.name}?`}
                      confirmLabel="Revoke"
                      onConfirm={async () => {
                        await changes.revokeToken(token.id)
                        await queryClient.invalidateQueries({ queryKey: keys.tokens })
                      }}
                    >
                      <p>It stops working within seconds, for every session signed in with it.</p>
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
    </>
  )
}
