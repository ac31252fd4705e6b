import type { Session } from '@sluice/server/api'
import { createContext, useContext } from 'react'

export const SessionContext = createContext<Session>({ role: 'viewer', name: '' })

/** True when the signed-in token may change things (viewers see no write buttons). */
export function useCanWrite(): boolean {
  return useContext(SessionContext).role === 'admin'
}
