import { Link } from '../ui/content.tsx'

/** What a path the app has no page for shows, and a page whose record is gone (deleted, or a wrong id). */
export function NotFound({ what, back }: { what?: string; back?: { to: string; label: string } }) {
  return (
    <section>
      <h1>{what ? `${what} not found` : 'Page not found'}</h1>
      <div className="card notice">
        <p>
          {what
            ? `There is no ${what.toLowerCase()} at this address: it may have been deleted, or the link is mistyped.`
            : 'There is no page at this address: the link may be mistyped or out of date.'}
        </p>
        <p className="row-actions">
          {back && (
            <Link to={back.to} className="button">
              {back.label}
            </Link>
          )}
          <Link to="/sources" className={back ? 'button secondary' : 'button'}>
            Go to Sources
          </Link>
        </p>
      </div>
    </section>
  )
}
