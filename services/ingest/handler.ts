import { Readable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { PROPERTY_UPDATE_TABLE, SCORE_TABLE } from '../shared/clickhouse/annotation-tables.ts'
import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import { isClickHouseUnavailable } from '../shared/clickhouse/errors.ts'
import {
  AVRO_INSERT,
  INSERT_COLUMNS,
  REQUEST_TABLE,
  toCompactRow,
} from '../shared/clickhouse/request-table.ts'
import type { DeletedOrganizations } from '../shared/deleted-organizations.ts'
import type { RecordCodec } from '../shared/events/codec.ts'
import { isAnnotation, type TallyEvent } from '../shared/events/event.ts'
import type { EventHandler } from '../shared/events/handler.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { Logger } from '../shared/logger.ts'
import { counter, histogram } from '../shared/metrics.ts'
import { TIME_RANGE } from '../shared/timestamp.ts'
import { PROPERTY_UPDATE_COLUMNS, propertyUpdateRow, SCORE_COLUMNS, scoreRow } from './annotation-tables.ts'
import { avroContainer } from './avro-container.ts'
import { createDeletionSweeper, type DeletionSweeper } from './sweeper.ts'

const written = counter(
  'tally_events_written_total',
  'Rows inserted into request_response_rmt (a redelivered event is written again and replaced)',
)
const annotated = counter(
  'tally_annotations_written_total',
  'Scores and after-the-fact properties inserted (a redelivered one is written again and replaced)',
)
const dropped = counter(
  'tally_ingest_events_dropped_total',
  'Events not written because their organization was deleted',
)
const batchSize = histogram('tally_ingest_batch_events', 'Events per ClickHouse insert', {
  buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000],
})
const batchSeconds = histogram(
  'tally_ingest_batch_duration_seconds',
  'Duration of one ClickHouse insert, failed ones included',
  {
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  },
)

// ClickHouse error codes that a row's own values cause: retrying the same row can never
// succeed. Anything else (connection refused, timeouts, UNKNOWN_TABLE while detached, too many
// parts, memory) may pass later and is retried.
const ROW_ERRORS: Record<string, string> = {
  '6': 'CANNOT_PARSE_TEXT',
  '25': 'CANNOT_PARSE_ESCAPE_SEQUENCE',
  '26': 'CANNOT_PARSE_QUOTED_STRING',
  '27': 'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  '38': 'CANNOT_PARSE_DATE',
  '41': 'CANNOT_PARSE_DATETIME',
  '53': 'TYPE_MISMATCH',
  '69': 'ARGUMENT_OUT_OF_BOUND',
  '70': 'CANNOT_CONVERT_TYPE',
  '72': 'CANNOT_PARSE_NUMBER',
  '117': 'INCORRECT_DATA',
  '128': 'TOO_LARGE_ARRAY_SIZE',
  '130': 'CANNOT_READ_ARRAY_FROM_TEXT',
  '131': 'TOO_LARGE_STRING_SIZE',
  '321': 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  '349': 'CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN',
  '376': 'CANNOT_PARSE_UUID',
  '467': 'CANNOT_PARSE_BOOL',
}

/**
 * The reason a ClickHouse error can never succeed for the rows inserted, or undefined. Read from
 * the error's code: both @clickhouse/client and chdb raise a ClickHouseError with `code` (and
 * `type`), though from different copies of the class, so it is recognised by shape.
 */
function rowErrorReason(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined
  const { code, type } = err as Error & { code?: unknown; type?: unknown }
  if (typeof code !== 'string' || !Object.hasOwn(ROW_ERRORS, code)) return undefined
  const name = typeof type === 'string' && type ? type : ROW_ERRORS[code]
  const detail = (err.message.split('\n')[0] ?? '').slice(0, 300)
  return `clickhouse ${name} (code ${code}): ${detail}`
}

const inTimeRange = (time: Date) => {
  const ms = time.getTime()
  return ms >= TIME_RANGE.minMs && ms <= TIME_RANGE.maxMs
}

/**
 * Writes request events as they travel on the topic: their Avro records, the bytes each was
 * decoded from, framed as one container (no row is built, serialised nor parsed as text), in one
 * insert. ClickHouse's Avro reader stores a time beyond DateTime64's range as 9999-12-31 where
 * its text reader refuses it (measured on 26.7): events with such a time — only ever on the
 * topic from a producer older than the intake's bounds — are written as JSON rows instead, so
 * that ClickHouse's refusal dead-letters them as before.
 */
function createRequestWriter(client: ClickHouseClient, codec: RecordCodec<RequestEvent>) {
  const container = avroContainer(codec.schema)
  return async (events: RequestEvent[]) => {
    const bodies: Buffer[] = []
    const rows: unknown[][] = []
    for (const e of events) {
      if (inTimeRange(e.created_at) && inTimeRange(e.completed_at)) bodies.push(codec.body(e))
      else rows.push(toCompactRow(e))
    }
    if (bodies.length > 0) await insertRequestContainer(client, container.frame(bodies))
    await insertRows(client, REQUEST_TABLE, INSERT_COLUMNS, rows)
  }
}

/** Inserts an Avro container of request event records (AVRO_INSERT). */
export async function insertRequestContainer(client: ClickHouseClient, file: Buffer): Promise<void> {
  const { stream } = await client.exec({ query: AVRO_INSERT, values: Readable.from([file]) })
  // An insert answers with an empty body: read to its end, so the connection is reused.
  stream.resume()
  await finished(stream)
}

/** Inserts rows of `columns`' values as JSONCompactEachRow; none, nothing. */
async function insertRows(
  client: ClickHouseClient,
  table: string,
  columns: readonly string[],
  rows: unknown[][],
): Promise<void> {
  if (rows.length > 0)
    await client.insert({
      table,
      columns: [...columns] as [string, ...string[]],
      values: rows,
      format: 'JSONCompactEachRow',
    })
}

/**
 * Writes each batch's requests to request_response_rmt in one insert (createRequestWriter), and
 * its scores and after-the-fact properties to their tables (annotation-tables.ts). A re-ingested
 * request has the same sorting key, so ReplacingMergeTree keeps one row; queries read with FINAL
 * until merges catch up. Events of deleted organizations are dropped (and what may have been
 * written of them is swept).
 */
export function createIngestHandler(
  client: ClickHouseClient,
  log: Logger,
  deletions: DeletedOrganizations,
  codec: RecordCodec<RequestEvent>,
  sweeper: DeletionSweeper = createDeletionSweeper(client, deletions, log),
): EventHandler {
  const writeRequests = createRequestWriter(client, codec)
  async function write(batch: TallyEvent[]): Promise<void> {
    const deleted = await deletions.among(batch.map((e) => e.organization_id))
    const events = deleted.size === 0 ? batch : batch.filter((e) => !deleted.has(e.organization_id))
    if (deleted.size > 0) {
      dropped.inc(batch.length - events.length)
      for (const organizationId of deleted) await sweeper.dropping(organizationId)
    }
    if (events.length === 0) return
    // Before the insert: one that fails may still have written.
    sweeper.writes(new Set(events.map((e) => e.organization_id)))
    const requests: RequestEvent[] = []
    const scores = []
    const properties = []
    for (const e of events) {
      if (!isAnnotation(e)) requests.push(e)
      else if (e.kind === 'score') scores.push(scoreRow(e))
      else properties.push(propertyUpdateRow(e))
    }
    const stop = batchSeconds.startTimer()
    try {
      // Each table's rows are replaced by a later write of the same key, so a batch retried after
      // one of these inserts succeeded writes those rows again harmlessly.
      if (requests.length > 0) await writeRequests(requests)
      await insertRows(client, SCORE_TABLE, SCORE_COLUMNS, scores)
      await insertRows(client, PROPERTY_UPDATE_TABLE, PROPERTY_UPDATE_COLUMNS, properties)
    } finally {
      stop()
    }
    written.inc(requests.length)
    annotated.inc(scores.length + properties.length)
    batchSize.observe(events.length)
    log.debug({ batch: events.length }, 'ingest_batch_written')
  }

  return {
    name: 'ingest',
    permanent: rowErrorReason,
    // A server or shard that cannot take the insert now: on a cluster the rows bound for a shard
    // that is down fail while the others are written, which says nothing against those rows.
    transient: isClickHouseUnavailable,
    async handle(events: TallyEvent[]) {
      if (events.length > 0) await sweeper.writing(write(events))
    },
  }
}
