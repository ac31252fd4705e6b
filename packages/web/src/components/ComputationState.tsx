import type { ComputationStatus } from '@sluice/server/api'
import { StatusBadge } from '../ui/content.tsx'

/** The status of an audience or computed trait and, when it failed, why (it stays failed until changed). */
export function ComputationState({ status, error }: { status: ComputationStatus; error: string | null }) {
  return (
    <>
      <StatusBadge status={status} />
      {status === 'failed' && error && <p className="computation-error">{error}</p>}
    </>
  )
}
