/**
 * What the OpenAPI document shows for the metrics query: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  queryMetrics: {
    body: {
      timeFilter: {
        startTimeUnixMs: 1795046400000,
        endTimeUnixMs: 1795305600000,
      },
      measures: ['count', 'cost_sum', 'latency_p95'],
      dimensions: ['model'],
      granularity: 'day',
    },
    answer: {
      data: {
        granularity: 'day',
        buckets: [
          '2026-11-19T00:00:00.000+00:00',
          '2026-11-20T00:00:00.000+00:00',
          '2026-11-21T00:00:00.000+00:00',
        ],
        series: [
          {
            dimensions: {
              model: 'gpt-4o-mini',
            },
            totals: {
              count: 1,
              cost_sum: 1.17e-5,
              latency_p95: 1240,
            },
            values: {
              count: [0, 1, 0],
              cost_sum: [0, 1.17e-5, 0],
              latency_p95: [null, 1240, null],
            },
          },
        ],
        totals: {
          count: 1,
          cost_sum: 1.17e-5,
          latency_p95: 1240,
        },
      },
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
