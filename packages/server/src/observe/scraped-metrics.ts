/**
 * Counters and histograms for the delivery hot path (every attempt, every outcome commit). An update
 * is a plain number or Float64Array increment on a child bound once: no label hashing, no allocation.
 * The Prometheus text is built only when `/metrics` is scraped. prom-client's `inc` and `observe`
 * hash the label set and allocate on every call (about 0.8 µs each), which is why these are not
 * prom-client metrics.
 *
 * The exposition is exactly prom-client's for the same metric: the same sample names, label order
 * (`le` first on buckets), value formatting, and a histogram series appears once it has an
 * observation.
 */

/** One labelled counter series. */
export interface CounterChild {
  value: number
}

/** One labelled histogram series. */
export class HistogramChild {
  /** Observations per bucket, not cumulative; the last slot holds those above the highest bound. */
  readonly counts: Float64Array
  sum = 0
  count = 0
  private readonly bounds: readonly number[]

  constructor(bounds: readonly number[]) {
    this.bounds = bounds
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let bucket = 0
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++
    this.counts[bucket] = this.counts[bucket]! + 1
    this.sum += value
    this.count++
  }
}

/** A metric family that renders itself in the Prometheus text format. */
export interface ScrapedMetric {
  render(): string
}

export class ScrapedCounter implements ScrapedMetric {
  private readonly children = new Map<string, { labels: string; child: CounterChild }>()
  private readonly name: string
  private readonly help: string
  private readonly labelNames: readonly string[]

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name
    this.help = help
    this.labelNames = labelNames
  }

  /** The series of these label values (in `labelNames` order), created at 0 on first use. */
  child(...labelValues: string[]): CounterChild {
    const labels = formatLabels(this.labelNames, labelValues)
    let entry = this.children.get(labels)
    if (!entry) {
      entry = { labels, child: { value: 0 } }
      this.children.set(labels, entry)
    }
    return entry.child
  }

  render(): string {
    const lines = header(this.name, this.help, 'counter')
    for (const { labels, child } of this.children.values()) {
      lines.push(`${this.name}{${labels}} ${formatValue(child.value)}`)
    }
    return lines.join('\n')
  }
}

export class ScrapedHistogram implements ScrapedMetric {
  private readonly children = new Map<string, { labels: string; child: HistogramChild }>()
  private readonly name: string
  private readonly help: string
  private readonly labelName: string
  private readonly bounds: readonly number[]

  constructor(name: string, help: string, labelName: string, bounds: readonly number[]) {
    this.name = name
    this.help = help
    this.labelName = labelName
    this.bounds = bounds
  }

  /** The series of this label value, created on first use. */
  child(labelValue: string): HistogramChild {
    const labels = formatLabels([this.labelName], [labelValue])
    let entry = this.children.get(labels)
    if (!entry) {
      entry = { labels, child: new HistogramChild(this.bounds) }
      this.children.set(labels, entry)
    }
    return entry.child
  }

  render(): string {
    const lines = header(this.name, this.help, 'histogram')
    for (const { labels, child } of this.children.values()) {
      // As prom-client: a series is shown from its first observation on.
      if (child.count === 0) continue
      let cumulative = 0
      for (const [bucket, bound] of this.bounds.entries()) {
        cumulative += child.counts[bucket]!
        lines.push(`${this.name}_bucket{le="${bound}",${labels}} ${formatValue(cumulative)}`)
      }
      lines.push(`${this.name}_bucket{le="+Inf",${labels}} ${formatValue(child.count)}`)
      lines.push(`${this.name}_sum{${labels}} ${formatValue(child.sum)}`)
      lines.push(`${this.name}_count{${labels}} ${formatValue(child.count)}`)
    }
    return lines.join('\n')
  }
}

const header = (name: string, help: string, type: string): string[] => [
  `# HELP ${name} ${escapeText(help)}`,
  `# TYPE ${name} ${type}`,
]

const escapeText = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')

const formatLabels = (names: readonly string[], values: readonly string[]) =>
  names.map((name, i) => `${name}="${escapeText(values[i] ?? '').replace(/"/g, '\\"')}"`).join(',')

/** prom-client's number format. */
function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'Nan'
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf'
  return `${value}`
}
