import type { ProfileIdentities } from '@sluice/server/api'
import { Link } from '../ui/content.tsx'

/** A person in a list: their user id (or anonymous id), linked to their profile. */
export function MemberName({ member }: { member: ProfileIdentities }) {
  const userId = member.userIds[0]
  const anonymousId = member.anonymousIds[0]
  const to = userId
    ? `/profiles?userId=${encodeURIComponent(userId)}`
    : anonymousId
      ? `/profiles?anonymousId=${encodeURIComponent(anonymousId)}`
      : '/profiles'
  return (
    <>
      <Link to={to}>{userId ?? anonymousId ?? member.profileId}</Link>
      {!userId && anonymousId && <span className="muted"> (anonymous)</span>}
      {member.userIds.length > 1 && <span className="muted"> +{member.userIds.length - 1} more ids</span>}
    </>
  )
}
