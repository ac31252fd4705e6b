import { useQuery } from '@tanstack/react-query'
import { queries } from '../api/queries.ts'
import { alertWords, noticeWords } from '../model/notice-words.ts'
import { formatTime, Link } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { Loading } from '../ui/lists.tsx'

/** Notices read: the most recent operational events, of which a destination's page shows its own. */
const NOTICES_READ = 100
const NOTICES_SHOWN = 10

const TITLES = {
  'destination.url.failing': 'URL failing',
  'destination.url.disabled': 'URL disabled',
  'destination.url.recovered': 'URL recovered',
  'delivery.dead_lettered': 'Dead-lettered',
  'regulation.finished': 'Privacy request finished',
} as const

/** Bad news in red, good news in green, the rest as text. */
const TONE = {
  'destination.url.failing': 'notice-bad',
  'destination.url.disabled': 'notice-bad',
  'destination.url.recovered': 'notice-good',
  'delivery.dead_lettered': 'notice-bad',
  'regulation.finished': undefined,
} as const

/** Recent notices: every one, or a destination's own. */
export function Notices({ destinationId }: { destinationId?: string }) {
  const notices = useQuery({ ...queries.notices(NOTICES_READ), refetchInterval: 10_000 })
  // Some notices carry only the destination's id: its name comes from the list.
  const destinations = useQuery({ ...queries.destinations(), enabled: destinationId === undefined })
  const nameOf = (id: string): string =>
    destinations.data?.destinations.find((destination) => destination.id === id)?.name ?? id
  const shown = (notices.data?.notices ?? [])
    .filter((notice) => destinationId === undefined || notice.data.destinationId === destinationId)
    .slice(0, NOTICES_SHOWN)
  return (
    <div className="card notices">
      <h2 id={`notices-${destinationId ?? 'all'}`}>Notices</h2>
      {notices.isPending ? (
        <Loading what="notices" />
      ) : shown.length === 0 ? (
        <p className="muted">
          Nothing to report: Sluice tells here when a URL has failed 20 times in a row, is disabled or
          recovers, and when deliveries are dead-lettered. A URL shows as failing from its first failed
          request.
        </p>
      ) : (
        <ul aria-labelledby={`notices-${destinationId ?? 'all'}`} className="notice-list">
          {shown.map((notice) => {
            const destination = notice.data.destinationId
            const alert = alertWords(notice)
            return (
              <li key={notice.id}>
                <strong className={TONE[notice.type]}>{TITLES[notice.type]}</strong>{' '}
                <span className="muted">{formatTime(notice.createdAt)}</span>
                {destinationId === undefined && destination !== undefined && (
                  <>
                    {' · '}
                    <Link to={`/destinations/${destination}`}>
                      {typeof notice.data.destinationName === 'string'
                        ? notice.data.destinationName
                        : nameOf(destination)}
                    </Link>
                  </>
                )}
                {destinationId === undefined && notice.type === 'regulation.finished' && (
                  <>
                    {' · '}
                    <Link to="/privacy">Privacy</Link>
                  </>
                )}
                <br />
                {noticeWords(notice)}
                {alert && <span className="muted"> {alert}.</span>}
              </li>
            )
          })}
        </ul>
      )}
      <ErrorBox error={notices.error} />
    </div>
  )
}
