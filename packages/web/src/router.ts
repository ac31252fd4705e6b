/**
 * The app's few routes need no router library: the path lives in the History API, and components read
 * it through useSyncExternalStore.
 */
import { type MouseEvent, useSyncExternalStore } from 'react'

const listeners = new Set<() => void>()
window.addEventListener('popstate', () => {
  for (const listener of listeners) listener()
})

export function navigate(to: string): void {
  if (to === location.pathname + location.search) return
  history.pushState(null, '', to)
  for (const listener of listeners) listener()
  window.scrollTo(0, 0)
}

export function usePath(): string {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    () => location.pathname,
  )
}

/** A click handler for in-app links: plain clicks navigate in place, modified clicks keep browser behaviour. */
export function linkHandler(to: string) {
  return (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to)
  }
}

/** The query string (`?userId=…`), following in-app navigation like `usePath`. */
export function useSearch(): string {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    () => location.search,
  )
}
