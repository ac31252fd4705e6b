/**
 * Run as a child process by tracing.test.ts: starts Sluice without any OTLP endpoint, sends a call
 * through it, and prints which OpenTelemetry modules were resolved (none, when tracing is free).
 */
import { registerHooks } from 'node:module'

const resolved: string[] = []
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.includes('@opentelemetry')) resolved.push(`${specifier} from ${context.parentURL}`)
    return nextResolve(specifier, context)
  },
})
const { startTestSluice } = await import('../helpers/sluice.ts')
const { send, trackCall } = await import('../helpers/tracking.ts')
const sluice = await startTestSluice({ otlpTracesUrl: undefined })
const source = await sluice.createSource()
const answer = await send(sluice.url, '/v1/track', trackCall(), { writeKey: source.writeKey })
await sluice.destroy()
process.stdout.write(JSON.stringify({ status: answer.status, resolved }))
