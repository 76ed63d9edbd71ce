import type { ClickHouseClient } from '@clickhouse/client'
import { histogram } from '../metrics.ts'

const duration = histogram(
  'tally_clickhouse_request_duration_seconds',
  'ClickHouse requests from this process, until the answer began (query, insert, command) or ended (the rest)',
  {
    labelNames: ['operation', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
)

const OPERATIONS = ['query', 'insert', 'command', 'exec'] as const

/** The client with every request timed in tally_clickhouse_request_duration_seconds. */
export function timed(client: ClickHouseClient): ClickHouseClient {
  for (const operation of OPERATIONS) {
    const run = client[operation].bind(client) as (params: unknown) => Promise<unknown>
    Object.defineProperty(client, operation, {
      value: async (params: unknown) => {
        const end = duration.startTimer({ operation })
        try {
          const result = await run(params)
          end({ outcome: 'ok' })
          return result
        } catch (err) {
          end({ outcome: 'error' })
          throw err
        }
      },
    })
  }
  return client
}
