import { Link } from '../ui/content.tsx'

export function Catalog() {
  return (
    <section>
      <h1>Catalog</h1>
      <p className="muted">Pick where your calls should go.</p>
      <ul className="catalog">
        <li className="card">
          <h2>Webhooks</h2>
          <p>
            Send every call as JSON to up to 5 URLs of yours (POST, PUT or PATCH; one call a request or in
            batches), with static headers and, if you want, a signature (X-Signature or Standard Webhooks). A
            subscription, filters and a mapping decide what each destination gets.
          </p>
          <Link to="/catalog/webhooks" className="button">
            Set up Webhooks
          </Link>
        </li>
      </ul>
    </section>
  )
}
