import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import {
  READ_SETTINGS,
  REQUEST_COLUMNS,
  REQUEST_TABLE,
  readColumns,
  requestRowSchema,
} from '../shared/clickhouse/request-table.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'

/** A scored request: its organization and id. */
interface ScoredRequestId {
  organizationId: string
  requestId: string
}

/**
 * The stored requests that score events are about, as request events (without their bodies,
 * which a webhook filter may not read): what a webhook's filter decides a score event on, and
 * where its session id comes from.
 */
export interface ScoredRequests {
  /** Keyed `organizationId:requestId`; a request not stored (yet) is absent. */
  find(ids: ScoredRequestId[]): Promise<Map<string, RequestEvent>>
}

export const scoredKey = (organizationId: string, requestId: string) => `${organizationId}:${requestId}`

const rowSchema = requestRowSchema.extend({ organization_id: requestRowSchema.shape.request_id })

/** Record columns to event fields: the record is named after the event's fields. */
const FIELDS = REQUEST_COLUMNS.flatMap((c) =>
  'record' in c && c.kind !== 'body' ? [{ column: c.name, field: c.event.field }] : [],
)

/**
 * One query per call, for every organization and request at once: parameterised, the newest
 * version of each row (FINAL), pairs of another organization dropped.
 */
export function createScoredRequests(client: ClickHouseClient): ScoredRequests {
  return {
    async find(ids) {
      const found = new Map<string, RequestEvent>()
      if (ids.length === 0) return found
      const wanted = new Set(ids.map((id) => scoredKey(id.organizationId, id.requestId)))
      const result = await client.query({
        query: `SELECT organization_id, ${readColumns(false)}
          FROM ${REQUEST_TABLE} FINAL
          WHERE organization_id IN {orgs:Array(UUID)} AND request_id IN {ids:Array(UUID)}`,
        query_params: {
          orgs: [...new Set(ids.map((id) => id.organizationId))],
          ids: [...new Set(ids.map((id) => id.requestId))],
        },
        format: 'JSONEachRow',
        clickhouse_settings: READ_SETTINGS,
      })
      for (const row of rowSchema.array().parse(await result.json())) {
        const key = scoredKey(row.organization_id, row.request_id)
        if (!wanted.has(key)) continue
        const event: Record<string, unknown> = {
          organization_id: row.organization_id,
          request_body: '',
          response_body: '',
        }
        for (const { column, field } of FIELDS) event[field] = row[column as keyof typeof row]
        found.set(key, event as unknown as RequestEvent)
      }
      return found
    },
  }
}
