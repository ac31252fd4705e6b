import type { Session } from '@sluice/server/api'
import { useMutation, useQuery } from '@tanstack/react-query'
import { lazy, Suspense, useEffect, useState } from 'react'
import { ApiError } from './api/client.ts'
import { changes, queries } from './api/queries.ts'
import { Catalog } from './pages/Catalog.tsx'
import { Destinations } from './pages/Destinations.tsx'
import { NotFound } from './pages/NotFound.tsx'
import { SignIn } from './pages/SignIn.tsx'
import { Sources } from './pages/Sources.tsx'
import { SourceView } from './pages/SourceView.tsx'
import { navigate, usePath } from './router.ts'
import { SessionContext } from './session.ts'
import { Link } from './ui/content.tsx'
import { ErrorBox } from './ui/errors.tsx'
import { Loading } from './ui/lists.tsx'

// Pages past the lists load on first visit, so that the first load stays small.
const DestinationView = lazy(() =>
  import('./pages/DestinationView.tsx').then((module) => ({ default: module.DestinationView })),
)
const WebhooksWizard = lazy(() =>
  import('./pages/WebhooksWizard.tsx').then((module) => ({ default: module.WebhooksWizard })),
)
const Access = lazy(() => import('./pages/Access.tsx').then((module) => ({ default: module.Access })))
const Privacy = lazy(() => import('./pages/Privacy.tsx').then((module) => ({ default: module.Privacy })))
const Audiences = lazy(() =>
  import('./pages/Audiences.tsx').then((module) => ({ default: module.Audiences })),
)
const AudienceView = lazy(() =>
  import('./pages/AudienceView.tsx').then((module) => ({ default: module.AudienceView })),
)

const Profiles = lazy(() => import('./pages/Profiles.tsx').then((module) => ({ default: module.Profiles })))
const Settings = lazy(() => import('./pages/Settings.tsx').then((module) => ({ default: module.Settings })))

const NAV = [
  { to: '/sources', label: 'Sources' },
  { to: '/catalog', label: 'Catalog' },
  { to: '/destinations', label: 'Destinations' },
  { to: '/privacy', label: 'Privacy' },
  { to: '/audiences', label: 'Audiences' },
  { to: '/profiles', label: 'Profiles' },
  { to: '/settings', label: 'Settings' },
]

export function App() {
  const session = useQuery(queries.session())
  if (session.isPending) return <Loading what="Sluice" />
  if (session.error instanceof ApiError && session.error.status === 401) return <SignIn />
  if (session.error) return <ErrorBox error={session.error} />
  return (
    <SessionContext.Provider value={session.data}>
      <Shell session={session.data} />
    </SessionContext.Provider>
  )
}

function Shell({ session }: { session: Session }) {
  const path = usePath()
  const [menuOpen, setMenuOpen] = useState(false)
  const signOut = useMutation({
    mutationFn: changes.signOut,
    // A fresh page load: nothing fetched while signed in stays in memory.
    onSuccess: () => window.location.assign('/'),
  })
  useEffect(() => {
    if (path === '/') navigate('/sources')
    setMenuOpen(false)
  }, [path])
  const nav = session.role === 'admin' ? [...NAV, { to: '/access', label: 'Access' }] : NAV
  return (
    <div className="shell">
      <header className="top">
        <Link to="/sources" className="brand">
          Sluice
        </Link>
        <button
          type="button"
          className="menu-toggle secondary"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : ''}>
          {nav.map((item) => (
            <a
              key={item.to}
              href={item.to}
              aria-current={path.startsWith(item.to) ? 'page' : undefined}
              onClick={(event) => {
                event.preventDefault()
                navigate(item.to)
              }}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <div className="who">
          <span className={`badge badge-${session.role}`}>{session.role}</span>
          <span className="muted who-name">{session.name}</span>
          <button type="button" className="secondary" onClick={() => signOut.mutate()}>
            Sign out
          </button>
        </div>
      </header>
      <main>
        <Suspense fallback={<Loading what="the page" />}>
          <Page path={path} />
        </Suspense>
      </main>
    </div>
  )
}

function Page({ path }: { path: string }) {
  const [, section, id, sub] = path.split('/')
  switch (section) {
    case 'sources':
      return id ? <SourceView id={id} /> : <Sources />
    case 'catalog':
      return id === 'webhooks' ? <WebhooksWizard /> : <Catalog />
    case 'destinations':
      if (sub !== undefined && sub !== 'edit') return <NotFound />
      return id ? <DestinationView id={id} edit={sub === 'edit'} /> : <Destinations />
    case 'privacy':
      return <Privacy />
    case 'audiences':
      return id ? <AudienceView id={id} /> : <Audiences />
    case 'profiles':
      return <Profiles />
    case 'settings':
      return <Settings />
    case 'access':
      return <Access />
    default:
      return path === '/' ? null : <NotFound />
  }
}
