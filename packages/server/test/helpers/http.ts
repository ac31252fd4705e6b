/**
 * HTTP calls of the tests with a deadline: a server that never answers fails the test that asked,
 * naming the request, instead of hanging the whole file (undici's own limits are five minutes).
 */

/** Generous: a loaded 2-core machine answers in seconds; only a request nobody answers reaches it. */
export const HTTP_DEADLINE_MS = 60_000

export interface HttpAnswer {
  status: number
  headers: Headers
  text: string
}

/** `fetch` and its whole body as text within `deadlineMs`; past it, fails naming the method and URL. */
export async function fetchText(
  url: string,
  init: RequestInit = {},
  deadlineMs = HTTP_DEADLINE_MS,
): Promise<HttpAnswer> {
  const deadline = AbortSignal.timeout(deadlineMs)
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline
  try {
    const response = await fetch(url, { ...init, signal })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text }
  } catch (error) {
    if (deadline.aborted) {
      throw new Error(`${init.method ?? 'GET'} ${url} got no complete answer within ${deadlineMs} ms`, {
        cause: error,
      })
    }
    throw error
  }
}
