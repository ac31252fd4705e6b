/**
 * HTTP endpoints of the dry run: `/destinations/dry-run` and `/destinations/:id/dry-run`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { DryRunResult, DryRunService } from '../deliver/dry-run.ts'
import { type DryRunView, dryRunSchema, savedDryRunSchema } from './dry-run-schemas.ts'

const view = (result: DryRunResult): DryRunView => ({
  ...result,
  samples: result.samples.map((sample) => ({ ...sample })),
})

export const dryRunEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { dryRuns: DryRunService }
}> = async (app, { dryRuns }) => {
  app.post('/destinations/dry-run', { schema: dryRunSchema }, async (request) =>
    view(await dryRuns.run(request.body)),
  )

  app.post('/destinations/:id/dry-run', { schema: savedDryRunSchema }, async (request) =>
    view(await dryRuns.runSaved(request.params.id, request.body ?? {})),
  )
}
