import { randomUUID } from 'node:crypto'

/** A row of the ClickHouse `scores` table (schemas/clickhouse/0005_scores.sql), as the ingest writes it. */
// A type, not an interface: it passes where rows are Record<string, unknown>.
export type ScoreRow = {
  organization_id: string
  id: string
  target_kind: 'request' | 'session'
  request_id: string
  session_id: string
  name: string
  source: 'api' | 'annotation' | 'eval'
  data_type: 'numeric' | 'boolean' | 'categorical'
  value: number
  string_value: string
  comment: string
  created_at: string
  version: number
  is_deleted: 0 | 1
}

const NIL = '00000000-0000-0000-0000-000000000000'

/** A live numeric score named helpfulness of no request; `fields` say what the test is about. */
export function scoreRow(organizationId: string, fields: Partial<ScoreRow>, createdAt: string): ScoreRow {
  return {
    organization_id: organizationId,
    id: randomUUID(),
    target_kind: 'request',
    request_id: NIL,
    session_id: '',
    name: 'helpfulness',
    source: 'api',
    data_type: 'numeric',
    value: 0,
    string_value: '',
    comment: '',
    created_at: createdAt,
    version: 1,
    is_deleted: 0,
    ...fields,
  }
}
