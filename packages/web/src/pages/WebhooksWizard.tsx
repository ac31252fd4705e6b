import { DestinationForm } from '../components/DestinationForm.tsx'
import { navigate } from '../router.ts'
import { useCanWrite } from '../session.ts'
import { Link } from '../ui/content.tsx'
import { AdminOnly } from '../ui/lists.tsx'
import { rememberSaved } from './DestinationView.tsx'

/** Catalog → Webhooks: the form; once saved, the new destination's own page. */
export function WebhooksWizard() {
  const canWrite = useCanWrite()
  return (
    <section>
      <p>
        <Link to="/catalog">← Catalog</Link>
      </p>
      <h1>Set up Webhooks</h1>
      {canWrite ? (
        <DestinationForm
          onSaved={(saved) => {
            rememberSaved(saved, true)
            navigate(`/destinations/${saved.id}`)
          }}
        />
      ) : (
        <AdminOnly what="Setting up a destination" />
      )}
    </section>
  )
}
