/** What any path the app has no page for shows. */
export function NotFound({ path }: { path: string }) {
  return (
    <section>
      <h1>Page not found</h1>
      <p className="card notice">There is no page at {path}.</p>
    </section>
  )
}
