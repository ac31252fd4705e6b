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
            POST every call as JSON to up to 5 URLs of yours, with static headers and an optional HMAC
            signature (X-Signature).
          </p>
          <Link to="/catalog/webhooks" className="button">
            Set up Webhooks
          </Link>
        </li>
      </ul>
    </section>
  )
}
