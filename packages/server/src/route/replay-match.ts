/**
 * Which stored calls a replay sends to its destination: those its own filters (`types`, `events`)
 * select, that the call's `integrations` allow for the destination's kind, and that pass the
 * destination's subscription and filters as they are now — the routing decision live calls get
 * (gates.ts, integrations.ts), taken again at replay time.
 */
import type { Destination } from '../domain/destinations.ts'
import type { Replay } from '../domain/replays.ts'
import { GatedCall, gateOf } from './gates.ts'
import { routeTo } from './integrations.ts'

/** A call of a replay's window, judged: true when it goes to the destination. */
export function replayMatches(
  replay: Pick<Replay, 'types' | 'events'>,
  destination: Pick<Destination, 'type' | 'settings'>,
  payloadJson: string,
): boolean {
  let call: Record<string, unknown>
  try {
    call = JSON.parse(payloadJson) as Record<string, unknown>
  } catch {
    return false
  }
  if (replay.types !== null && !replay.types.includes(call.type as never)) return false
  // `events` names track events: only track calls with one of those names go.
  if (replay.events !== null && (call.type !== 'track' || !replay.events.includes(String(call.event))))
    return false
  if (!routeTo(call.integrations).includes(destination.type)) return false
  const gate = gateOf(destination.settings)
  return gate === null || new GatedCall(payloadJson).verdict(gate) === 'kept'
}
