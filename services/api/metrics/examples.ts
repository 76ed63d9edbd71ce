/**
 * What the OpenAPI document shows for the Prometheus metrics route: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  getMetrics: {
    answer:
      '# HELP tally_events_accepted_total Request events the API acknowledged as durable (201)\n# TYPE tally_events_accepted_total counter\ntally_events_accepted_total 1842\n',
  },
} satisfies Record<string, OperationExamples>
