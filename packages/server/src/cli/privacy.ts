/**
 * `sluice privacy delete|suppress|unsuppress USER_ID… [--source ID]…` and `sluice privacy status [ID]`,
 * on the same domain operations as the management API. A deletion is erased here, batch by batch,
 * with progress on stderr (a running server would also pick it up); its `delete` notifications are
 * sent by the server's delivery engine.
 */

import type { HealthStore } from '../domain/health-store.ts'
import type { PrivacyStore } from '../domain/privacy-store.ts'
import { RegulationService } from '../domain/regulation-service.ts'
import type { Regulation, RegulationType } from '../domain/regulations.ts'
import type { SourceStore } from '../domain/source-store.ts'
import { thousands } from '../lib/thousands.ts'
import { settleRegulations } from '../privacy/regulation-settling.ts'

/** Messages erased per transaction, as the server's runner does. */
const ERASE_BATCH = 1_000

const TYPES: Record<string, RegulationType> = {
  delete: 'DELETE_ONLY',
  'suppress-and-delete': 'SUPPRESS_WITH_DELETE',
  suppress: 'SUPPRESS_ONLY',
  unsuppress: 'UNSUPPRESS',
}

export const PRIVACY_USAGE = `  privacy delete USER_ID… [--source ID]…
                         Erase the users' stored calls and send their destinations a delete
  privacy suppress-and-delete USER_ID… [--source ID]…
                         The same, and drop their later calls
  privacy suppress USER_ID… [--source ID]…
                         Drop the users' later calls (acknowledged, never stored)
  privacy unsuppress USER_ID… [--source ID]…
                         Accept their calls again
  privacy status [ID]    One request's progress, or the latest requests`

export interface PrivacyOptions {
  sourceIds: string[] | undefined
  json: boolean | undefined
}

export async function runPrivacy(
  store: PrivacyStore & SourceStore & HealthStore,
  command: string | undefined,
  args: string[],
  options: PrivacyOptions,
): Promise<number> {
  const service = new RegulationService(store)
  if (command === 'status') return showStatus(service, args[0], options.json)
  const type = command === undefined ? undefined : TYPES[command]
  if (type === undefined) {
    console.error(`Unknown privacy command "${command ?? ''}". Usage:\n${PRIVACY_USAGE}`)
    return 1
  }
  if (args.length === 0) {
    console.error(`Name at least one user id: sluice privacy ${command} USER_ID…`)
    return 1
  }
  let regulation = await service.create({
    regulationType: type,
    subjectIds: args,
    sourceIds: options.sourceIds,
  })
  if (regulation.status === 'INITIALIZED') {
    await eraseWithProgress(store)
    await store.eraseProfilesOfDeletions()
    await settleRegulations(store, Date.now())
    regulation = await service.get(regulation.id)
  }
  print(regulation, options.json)
  return 0
}

async function eraseWithProgress(store: PrivacyStore & SourceStore & HealthStore): Promise<void> {
  let erased = 0
  for (
    let step = await store.eraseNext(ERASE_BATCH);
    step !== null;
    step = await store.eraseNext(ERASE_BATCH)
  ) {
    erased += step.erased
    if (step.erased > 0) process.stderr.write(`\rErased ${thousands(erased)} messages…`)
  }
  if (erased > 0) process.stderr.write('\n')
}

async function showStatus(service: RegulationService, id: string | undefined, json: boolean | undefined) {
  if (id !== undefined) {
    print(await service.get(id), json)
    return 0
  }
  const regulations = await service.list({ limit: 20 })
  if (json) console.log(JSON.stringify(regulations))
  else if (regulations.length === 0) console.log('No privacy requests yet: sluice privacy delete USER_ID')
  else for (const regulation of regulations) print(regulation, false)
  return 0
}

function print(regulation: Regulation, json: boolean | undefined): void {
  if (json) {
    console.log(JSON.stringify(regulation))
    return
  }
  const users = regulation.subjectIds.length === 1 ? '1 user' : `${regulation.subjectIds.length} users`
  const where = regulation.sourceIds === null ? 'every source' : regulation.sourceIds.join(', ')
  console.log(
    `${regulation.id}  ${regulation.regulationType}  ${regulation.status}  ${users} in ${where}; erased ${regulation.erased.messages} messages`,
  )
  for (const each of regulation.destinations) {
    console.log(
      `  delete to ${each.destinationId}: ${each.status}, ${each.delivered} delivered, ${each.failed} failed`,
    )
  }
}
