/** The part of the Fetch API the library uses, so any `fetch`-compatible function can carry its requests. */

/** What the library passes to `fetch`: the subset of `RequestInit` it uses. */
export interface FetchInit {
  method: 'POST'
  headers: Record<string, string>
  body: string | Uint8Array<ArrayBuffer>
  /** Aborted on `timeout` and when `close()` gives up; a custom fetch must honour it. */
  signal: AbortSignal
}

/** What the library reads from the response: the subset of `Response` it uses. */
export interface FetchResponse {
  readonly status: number
  readonly headers: { get(name: string): string | null }
  text(): Promise<string>
}

/** A `fetch`-compatible function; the global `fetch` by default. */
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchResponse>
