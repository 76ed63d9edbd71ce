import { z } from 'zod'
import { EXPORTS_CHANNEL, type ExportFormat } from '../../shared/exports/contract.ts'
import { createCapped, inOrganizationTurn, type Sql } from '../../shared/postgres.ts'
import { newestFirst, type PagePosition, type PostgresPage } from '../http/cursor.ts'
import { type ExportRecord, exportRecord, type Period, type Schedule, schedule } from './schemas.ts'

// Postgres gives timestamps as Dates; the manifest (jsonb) holds them as ISO text, which its codec reads.
const records = exportRecord
  .extend({
    from: z.date(),
    to: z.date(),
    next_attempt_at: z.date().nullable(),
    created_at: z.date(),
    started_at: z.date().nullable(),
    finished_at: z.date().nullable(),
  })
  .array()
const schedules = schedule.extend({ next_window_start: z.date(), created_at: z.date() }).array()

/** What the API does with the export tables: queue exports, keep schedules, show both. */
export function createExportRepo(sql: Sql) {
  const columns = sql`id, status, window_from as "from", window_to as "to", filter, format, schedule_id,
    attempts, last_error, case when status = 'queued' then next_attempt_at end as next_attempt_at,
    case when status = 'queued' then waiting_reason end as waiting_reason,
    created_at, started_at, finished_at, manifest`
  const scheduleColumns = sql`id, period, format, filter, next_window_start, created_at`
  const json = (value: unknown) => sql.json(value as Parameters<typeof sql.json>[0])
  return {
    /**
     * Queues an export unless the organization already has `maxPending` queued or running, and
     * tells every exporter it is due (NOTIFY, sent at commit). The exporter's schedules lock the
     * organization too before they queue windows, so no way in passes the cap together.
     */
    async create(
      input: { organizationId: string; from: Date; to: Date; filter: unknown; format: ExportFormat },
      maxPending: number,
    ): Promise<{ created: ExportRecord } | { pending: number }> {
      return inOrganizationTurn(sql, input.organizationId, async (tx) => {
        const [{ pending } = { pending: 0 }] = await tx<{ pending: number }[]>`
          select count(*)::int as pending from exports
          where organization_id = ${input.organizationId} and status in ('queued', 'running')`
        if (pending >= maxPending) return { pending }
        const rows = await tx`
          insert into exports (organization_id, window_from, window_to, filter, format)
          values (${input.organizationId}, ${input.from}, ${input.to}, ${json(input.filter)}, ${input.format})
          returning ${columns}`
        await tx`select pg_notify(${EXPORTS_CHANNEL}, '')`
        return { created: records.parse(rows)[0] as ExportRecord }
      })
    },

    /**
     * Exports of the organization running under a lease that has not ended: a worker may still
     * write their files. Once none is, nothing writes for the organization until another is claimed.
     */
    async runningUnderLease(organizationId: string): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from exports
        where organization_id = ${organizationId} and status = 'running' and lease_expires_at > now()`
      return row?.n ?? 0
    },

    /**
     * One page, newest first: past `offset` rows or after `after` (the position a cursor holds:
     * the last row's created_at, as exact Postgres text, and id). Each record comes with its own
     * position.
     */
    async list(
      organizationId: string,
      page: PostgresPage<ExportRecord['status']>,
    ): Promise<{ record: ExportRecord; position: PagePosition }[]> {
      const rows = await sql<Record<string, unknown>[]>`
        select ${columns}, created_at::text as page_created_at from exports
        where organization_id = ${organizationId} ${newestFirst(sql, page)}`
      const parsed = records.parse(rows)
      return parsed.map((record, i) => ({
        record,
        position: { createdAt: String(rows[i]?.page_created_at), id: record.id },
      }))
    },

    async get(organizationId: string, id: string): Promise<ExportRecord | null> {
      const rows = await sql`
        select ${columns} from exports where organization_id = ${organizationId} and id = ${id}`
      return records.parse(rows)[0] ?? null
    },

    /** Creates a schedule unless the organization already holds `max`. */
    async createSchedule(
      input: { organizationId: string; period: Period; format: ExportFormat; filter: unknown; start: Date },
      max: number,
    ): Promise<{ created: Schedule } | { held: number }> {
      return createCapped(sql, 'export_schedules', input.organizationId, max, async (tx) => {
        const rows = await tx`
          insert into export_schedules (organization_id, period, format, filter, next_window_start)
          values (${input.organizationId}, ${input.period}, ${input.format}, ${json(input.filter)}, ${input.start})
          returning ${scheduleColumns}`
        return { created: schedules.parse(rows)[0] as Schedule }
      })
    },

    async listSchedules(organizationId: string, page: { offset: number; limit: number }) {
      const rows = await sql`
        select ${scheduleColumns} from export_schedules where organization_id = ${organizationId}
        order by created_at, id offset ${page.offset} limit ${page.limit}`
      return schedules.parse(rows)
    },

    async deleteSchedule(organizationId: string, id: string): Promise<boolean> {
      const rows = await sql`
        delete from export_schedules where organization_id = ${organizationId} and id = ${id} returning id`
      return rows.length > 0
    },
  }
}

export type ExportRepo = ReturnType<typeof createExportRepo>
