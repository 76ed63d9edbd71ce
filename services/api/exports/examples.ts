/**
 * What the OpenAPI document shows for the export routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** The envelope of a success. */
const ok = (data: unknown) => ({ data, error: null })

/** The export createExport's example asks for, once it has run. */
const finished = {
  id: '6e7f08fb-02f6-5411-a6c1-a3db5a70afd5',
  status: 'succeeded',
  from: '2026-11-20T00:00:00.000Z',
  to: '2026-11-21T00:00:00.000Z',
  filter: 'all',
  format: 'parquet',
  schedule_id: null,
  attempts: 1,
  last_error: null,
  next_attempt_at: null,
  waiting_reason: null,
  created_at: '2026-11-26T10:15:17.303Z',
  started_at: '2026-11-26T10:15:17.313Z',
  finished_at: '2026-11-26T10:15:17.378Z',
  manifest: {
    export_id: '6e7f08fb-02f6-5411-a6c1-a3db5a70afd5',
    organization_id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
    window: {
      from: '2026-11-20T00:00:00.000Z',
      to: '2026-11-21T00:00:00.000Z',
    },
    filter: 'all',
    format: 'parquet',
    columns: [
      'organization_id',
      'request_id',
      'request_created_at',
      'response_created_at',
      'latency',
      'time_to_first_token',
      'provider',
      'model',
      'status',
      'target_url',
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'cost',
      'cached',
      'user_id',
      'session_id',
      'session_name',
      'session_path',
      'properties',
      'prompt_id',
      'prompt_version',
      'request_body',
      'response_body',
      'trace_id',
      'span_id',
      'parent_span_id',
      'scores',
      'score_categories',
    ],
    files: [
      {
        name: 'part-00001.parquet',
        rows: 1,
        bytes: 13357,
        sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      },
    ],
    total_rows: 1,
    counted_rows: 1,
    created_at: '2026-11-26T10:15:17.317Z',
    finished_at: '2026-11-26T10:15:17.373Z',
  },
}

/** The daily schedule createExportSchedule's example makes. */
const schedule = {
  id: '4adec20c-17b3-52cf-837d-ff977b57190a',
  period: 'daily',
  format: 'jsonl',
  filter: 'all',
  next_window_start: '2026-11-20T00:00:00.000Z',
  created_at: '2026-11-26T10:15:20.328Z',
}

export const examples = {
  createExport: {
    body: {
      from: '2026-11-20T00:00:00Z',
      to: '2026-11-21T00:00:00Z',
      format: 'parquet',
      filter: 'all',
    },
    answer: ok({
      ...finished,
      ...{
        status: 'queued',
        attempts: 0,
        next_attempt_at: '2026-11-26T10:15:17.303Z',
        started_at: null,
        finished_at: null,
        manifest: null,
      },
    }),
  },
  getExport: {
    parameters: { id: finished.id },
    answer: ok({
      ...finished,
      download: {
        expires_at: '2026-11-26T10:25:20.319Z',
        manifest_url:
          'http://127.0.0.1:8787/blobs/exports/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/6e7f08fb-02f6-5411-a6c1-a3db5a70afd5/manifest.json?expires=1795688720&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
        files: [
          {
            name: 'part-00001.parquet',
            url: 'http://127.0.0.1:8787/blobs/exports/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/6e7f08fb-02f6-5411-a6c1-a3db5a70afd5/part-00001.parquet?expires=1795688720&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
          },
        ],
      },
    }),
  },
  listExports: {
    parameters: {
      limit: 10,
      status: 'succeeded',
    },
    answer: { ...ok([finished]), next_cursor: null },
  },
  createExportSchedule: {
    body: {
      period: 'daily',
      format: 'jsonl',
      filter: 'all',
      start: '2026-11-20T00:00:00Z',
    },
    answer: ok(schedule),
  },
  listExportSchedules: { answer: ok([schedule]) },
  deleteExportSchedule: { parameters: { id: schedule.id }, answer: ok(null) },
} satisfies Record<string, OperationExamples>
