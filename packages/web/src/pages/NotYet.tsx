import type { ReactNode } from 'react'

export function NotYet({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section>
      <h1>{title}</h1>
      <p className="card notice">{children}</p>
    </section>
  )
}
