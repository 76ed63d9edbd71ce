import type { AnnotationEvent } from '../shared/events/annotation-event.ts'
import { clickHouseTime } from '../shared/timestamp.ts'

const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export const SCORE_COLUMNS = [
  'organization_id',
  'id',
  'target_kind',
  'request_id',
  'session_id',
  'name',
  'source',
  'data_type',
  'value',
  'string_value',
  'comment',
  'created_at',
  'version',
  'is_deleted',
] as const

export const PROPERTY_UPDATE_COLUMNS = [
  'organization_id',
  'request_id',
  'key',
  'value',
  'updated_at',
  'version',
] as const

/** A score event as a JSONCompactEachRow row of SCORE_COLUMNS. */
export function scoreRow(e: AnnotationEvent): unknown[] {
  return [
    e.organization_id,
    e.score_id,
    e.target_kind,
    e.request_id || NIL_UUID,
    e.session_id,
    e.name,
    e.source,
    e.data_type,
    e.value,
    e.string_value,
    e.comment,
    clickHouseTime(e.created_at),
    e.version,
    e.deleted ? 1 : 0,
  ]
}

/** A property event as a JSONCompactEachRow row of PROPERTY_UPDATE_COLUMNS. */
export function propertyUpdateRow(e: AnnotationEvent): unknown[] {
  return [e.organization_id, e.request_id, e.name, e.string_value, clickHouseTime(e.created_at), e.version]
}
