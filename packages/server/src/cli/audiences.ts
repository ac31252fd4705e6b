/**
 * `sluice audiences list|preview FILE.json|show ID`, on the same domain operations as the management
 * API. A definition the domain refuses is printed with the JSON pointer of the node at fault.
 */
import { readFile } from 'node:fs/promises'
import { AudienceService, type AudienceWithSize } from '../domain/audience-service.ts'
import type { DeliveryStore } from '../domain/delivery-store.ts'
import { ValidationError } from '../domain/errors.ts'
import type { ProfileStore } from '../domain/profile-store.ts'

export async function audiencesCommand(
  store: ProfileStore & DeliveryStore,
  sub: string | undefined,
  argument: string | undefined,
  json: boolean | undefined,
): Promise<number> {
  const audiences = new AudienceService(store)
  try {
    if (sub === 'list') return list(await audiences.list(), json)
    if (sub === 'show' && argument) {
      console.log(JSON.stringify(summary(await audiences.get(argument)), null, 2))
      return 0
    }
    if (sub === 'preview' && argument) return await preview(audiences, argument, json)
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    console.error(`${error.field}: ${error.message}`)
    return 1
  }
  console.error('Usage: sluice audiences list | preview FILE.json | show ID')
  return 1
}

function list(audiences: AudienceWithSize[], json: boolean | undefined): number {
  if (json) {
    console.log(JSON.stringify(audiences.map(summary)))
    return 0
  }
  if (audiences.length === 0) console.log('No audiences yet: POST /api/v1/audiences creates one.')
  for (const { audience, size } of audiences) {
    console.log(
      `${audience.id}  ${audience.status.padEnd(9)}  ${String(size).padStart(8)} members  ${audience.key}`,
    )
  }
  return 0
}

/** FILE.json holds a definition tree, or `{"definition": …, "includeAnonymous": …}`. */
async function preview(audiences: AudienceService, file: string, json: boolean | undefined): Promise<number> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
  const input =
    'definition' in parsed
      ? { definition: parsed.definition, includeAnonymous: parsed.includeAnonymous === true }
      : { definition: parsed }
  const { size, sample } = await audiences.preview(input)
  if (json) console.log(JSON.stringify({ size, sample }))
  else
    console.log(
      `${size} profile${size === 1 ? '' : 's'} match${size === 1 ? 'es' : ''}${sample.length > 0 ? `, e.g.:\n${sample.join('\n')}` : '.'}`,
    )
  return 0
}

function summary({ audience, size }: AudienceWithSize): Record<string, unknown> {
  return { ...audience, size }
}
