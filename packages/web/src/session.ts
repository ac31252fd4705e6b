import { createContext, useContext } from 'react'
import type { Session } from './api.ts'

export const SessionContext = createContext<Session>({ role: 'viewer', name: '' })

/** True when the signed-in token may change things (viewers see no write buttons). */
export function useCanWrite(): boolean {
  return useContext(SessionContext).role === 'admin'
}
