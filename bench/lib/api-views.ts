// The management API's answers as the benchmarks read them: the fields bench uses of each view, named
// after the server's own view types (packages/server/src/manage/*-schemas.ts), so that each interface
// here can become a type-only import of the server's view once the server exports its API types in one
// module. Type-only: nothing here runs.

/** Of the server's SourceView: `GET /api/v1/sources` answers `{ sources: SourceView[] }`. */
export interface SourceView {
  id: string
}

/** Of the server's DestinationView (`POST /api/v1/destinations` answers one). */
export interface DestinationView {
  id: string
}

/** Of the server's ComputedTraitView (`POST /api/v1/computed-traits` answers one). */
export interface ComputedTraitView {
  id: string
}

/** Of the server's AudienceView (`POST /api/v1/audiences` answers one). */
export interface AudienceView {
  id: string
}

/** Of the server's RegulationView (`POST /api/v1/regulations`, `GET /api/v1/regulations/:id`). */
export interface RegulationView {
  id: string
  status: 'INITIALIZED' | 'RUNNING' | 'FINISHED' | 'PARTIAL_SUCCESS' | 'FAILED'
  erased: { messages: number; profiles: number }
}

/** Of the server's SuppressionView: `GET /api/v1/suppressions` answers `{ suppressions: SuppressionView[] }`. */
export interface SuppressionView {
  userId: string
  sourceId: string | null
}
