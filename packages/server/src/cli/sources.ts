/**
 * `sluice sources create NAME` and `sluice sources list`, on the same domain operations as the
 * management API, so a name is cleaned and checked the same way. The domain's refusals (a
 * `ValidationError` with its message) propagate to main, which prints them.
 */

import type { SeriesStore } from '../domain/series-store.ts'
import { SourceService } from '../domain/source-service.ts'
import type { SourceStore } from '../domain/source-store.ts'

export async function createSource(
  store: SourceStore & SeriesStore,
  name: string,
  json: boolean | undefined,
): Promise<number> {
  if (name.trim() === '') {
    console.error('Give the source a name: sluice sources create "My app"')
    return 1
  }
  const { source } = await new SourceService(store).create({ name })
  if (json) console.log(JSON.stringify(source))
  else console.log(`Created source "${source.name}" (${source.id})\nWrite key: ${source.writeKey}`)
  return 0
}

export async function listSources(
  store: SourceStore & SeriesStore,
  json: boolean | undefined,
): Promise<number> {
  const sources = (await new SourceService(store).list()).map(({ source }) => source)
  if (json) {
    console.log(JSON.stringify(sources))
    return 0
  }
  if (sources.length === 0) console.log('No sources yet: sluice sources create "My app"')
  for (const s of sources) {
    console.log(`${s.id}  ${s.enabled ? 'enabled ' : 'disabled'}  ${s.writeKey}  ${s.name}`)
  }
  return 0
}
