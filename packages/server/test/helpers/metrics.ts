import { fetchText } from './http.ts'

/**
 * Reads Prometheus text exposition (what `GET /metrics` serves) into samples the tests can assert on.
 */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Every sample of a text exposition; `# HELP` / `# TYPE` lines are skipped. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line)
    if (!match) throw new Error(`Not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c))
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when absent. */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

/** Scrapes `baseUrl/metrics` with `token` (when given); fails unless it answers 200. */
export async function scrape(baseUrl: string, token?: string): Promise<Sample[]> {
  const response = await fetchText(`${baseUrl}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })
  const { text } = response
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`)
  return parseMetrics(text)
}
