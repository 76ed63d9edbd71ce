import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { Sql } from '../../shared/postgres.ts'
import {
  type ExportFormat,
  type ExportRecord,
  exportRecord,
  FORMATS,
  type Manifest,
  manifest,
  type Period,
  type Schedule,
  schedule,
} from './schemas.ts'

/** An export a worker holds under a lease. */
export interface ClaimedExport {
  id: string
  organizationId: string
  from: Date
  to: Date
  filter: unknown
  format: ExportFormat
  /** Attempts so far, this one included. */
  attempts: number
  /** This claim's token: the outcome is written only while the row still carries it. */
  leaseToken: string
}

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
const claimed = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    window_from: z.date(),
    window_to: z.date(),
    filter: z.unknown(),
    format: z.enum(FORMATS),
    attempts: z.number().int(),
  })
  .array()

// Postgres text cannot hold NUL; an error message may quote anything.
const clean = (text: string) => text.replaceAll('\u0000', '').slice(0, 2_000)

export function createExportRepo(sql: Sql) {
  const columns = sql`id, status, window_from as "from", window_to as "to", filter, format, schedule_id,
    attempts, last_error, case when status = 'queued' then next_attempt_at end as next_attempt_at,
    created_at, started_at, finished_at, manifest`
  const scheduleColumns = sql`id, period, format, filter, next_window_start, created_at`
  const json = (value: unknown) => sql.json(value as Parameters<typeof sql.json>[0])

  return {
    async create(input: {
      organizationId: string
      from: Date
      to: Date
      filter: unknown
      format: ExportFormat
    }): Promise<ExportRecord> {
      const rows = await sql`
        insert into exports (organization_id, window_from, window_to, filter, format)
        values (${input.organizationId}, ${input.from}, ${input.to}, ${json(input.filter)}, ${input.format})
        returning ${columns}`
      return records.parse(rows)[0] as ExportRecord
    },

    /** Exports of the organization queued or running. */
    async pending(organizationId: string): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from exports
        where organization_id = ${organizationId} and status in ('queued', 'running')`
      return row?.n ?? 0
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

    async list(
      organizationId: string,
      page: { offset: number; limit: number; status?: ExportRecord['status'] | undefined },
    ): Promise<ExportRecord[]> {
      const rows = await sql`
        select ${columns} from exports
        where organization_id = ${organizationId} ${page.status ? sql`and status = ${page.status}` : sql``}
        order by created_at desc, id
        offset ${page.offset} limit ${page.limit}`
      return records.parse(rows)
    },

    async get(organizationId: string, id: string): Promise<ExportRecord | null> {
      const rows = await sql`
        select ${columns} from exports where organization_id = ${organizationId} and id = ${id}`
      return records.parse(rows)[0] ?? null
    },

    /**
     * Takes one due export: queued and due, or running under a lease that expired (the process
     * holding it died). Two workers never take the same row (SKIP LOCKED, then a fresh token).
     */
    async claim(leaseMs: number): Promise<ClaimedExport | null> {
      const leaseToken = randomUUID()
      const rows = await sql`
        with due as (
          select id from exports
          where (status = 'queued' and next_attempt_at <= now())
             or (status = 'running' and lease_expires_at < now())
          order by next_attempt_at
          limit 1
          for update skip locked
        )
        update exports e set status = 'running', lease_token = ${leaseToken},
          lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}),
          attempts = e.attempts + 1, started_at = coalesce(e.started_at, now())
        from due where e.id = due.id
        returning e.id, e.organization_id, e.window_from, e.window_to, e.filter, e.format, e.attempts`
      const [row] = claimed.parse(rows)
      if (!row) return null
      return {
        id: row.id,
        organizationId: row.organization_id,
        from: row.window_from,
        to: row.window_to,
        filter: row.filter,
        format: row.format,
        attempts: row.attempts,
        leaseToken,
      }
    },

    /** Moves the lease ahead; false when the export is no longer this claim's. */
    async renew(job: ClaimedExport, leaseMs: number): Promise<boolean> {
      const rows = await sql`
        update exports set lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000})
        where id = ${job.id} and lease_token = ${job.leaseToken} returning id`
      return rows.length > 0
    },

    async succeed(job: ClaimedExport, done: Manifest): Promise<boolean> {
      const rows = await sql`
        update exports set status = 'succeeded', lease_token = null, lease_expires_at = null,
          last_error = null, manifest = ${json(z.encode(manifest, done))}, finished_at = now()
        where id = ${job.id} and lease_token = ${job.leaseToken} returning id`
      return rows.length > 0
    },

    /** The attempt failed: due again after `delayMs`, with the reason shown meanwhile. */
    async retry(job: ClaimedExport, error: string, delayMs: number): Promise<boolean> {
      const rows = await sql`
        update exports set status = 'queued', lease_token = null, lease_expires_at = null,
          last_error = ${clean(error)}, next_attempt_at = now() + make_interval(secs => ${delayMs / 1000})
        where id = ${job.id} and lease_token = ${job.leaseToken} returning id`
      return rows.length > 0
    },

    async fail(job: ClaimedExport, error: string): Promise<boolean> {
      const rows = await sql`
        update exports set status = 'failed', lease_token = null, lease_expires_at = null,
          last_error = ${clean(error)}, finished_at = now()
        where id = ${job.id} and lease_token = ${job.leaseToken} returning id`
      return rows.length > 0
    },

    /** Gives the export back at shutdown, due at once: the interrupted attempt does not count. */
    async release(job: ClaimedExport): Promise<boolean> {
      const rows = await sql`
        update exports set status = 'queued', lease_token = null, lease_expires_at = null,
          attempts = greatest(attempts - 1, 0), next_attempt_at = now()
        where id = ${job.id} and lease_token = ${job.leaseToken} returning id`
      return rows.length > 0
    },

    async createSchedule(input: {
      organizationId: string
      period: Period
      format: ExportFormat
      filter: unknown
      start: Date
    }): Promise<Schedule> {
      const rows = await sql`
        insert into export_schedules (organization_id, period, format, filter, next_window_start)
        values (${input.organizationId}, ${input.period}, ${input.format}, ${json(input.filter)}, ${input.start})
        returning ${scheduleColumns}`
      return schedules.parse(rows)[0] as Schedule
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

    /**
     * Gives every ended window of due schedules its export, at most `maxWindows` per schedule
     * per call and no more than leave `maxPending` of its exports queued or running (the rest on
     * later calls, as those finish): a window has ended once its end is `settleMs` in the past.
     * A long backfill so never floods the queue ahead of other organizations' exports.
     * Windows follow each other without gaps, and a window already given an export (another
     * process got there first) is not given a second. Returns how many exports it created.
     */
    async enqueueScheduled(settleMs: number, maxWindows: number, maxPending: number): Promise<number> {
      // One statement: atomic without a transaction, so nothing is held open between round trips.
      const [row] = await sql<{ created: number }[]>`
        with clock as (select now() - make_interval(secs => ${settleMs / 1000}) as horizon),
        due as (
          select s.id, s.organization_id, s.format, s.filter, s.next_window_start,
                 case s.period when 'hourly' then interval '1 hour' else interval '24 hours' end as step
          from export_schedules s, clock
          where s.next_window_start
                + case s.period when 'hourly' then interval '1 hour' else interval '24 hours' end
                <= clock.horizon
          order by s.next_window_start
          limit 50
          for update of s skip locked
        ),
        room as (
          select d.*, least(${maxWindows}::int, ${maxPending}::int - (
            select count(*)::int from exports e
            where e.schedule_id = d.id and e.status in ('queued', 'running'))) as n
          from due d
        ),
        windows as (
          select r.id as schedule_id, r.organization_id, r.format, r.filter,
                 r.next_window_start + r.step * g.i as window_from,
                 r.next_window_start + r.step * (g.i + 1) as window_to
          from room r, clock, generate_series(0, greatest(r.n, 0) - 1) as g(i)
          where r.next_window_start + r.step * (g.i + 1) <= clock.horizon
        ),
        inserted as (
          insert into exports (organization_id, schedule_id, window_from, window_to, filter, format)
          select organization_id, schedule_id, window_from, window_to, filter, format from windows
          on conflict (schedule_id, window_from) where schedule_id is not null do nothing
          returning id
        ),
        moved as (
          update export_schedules s set next_window_start = w.last_to
          from (select schedule_id, max(window_to) as last_to from windows group by schedule_id) w
          where s.id = w.schedule_id
          returning s.id
        )
        select (select count(*)::int from inserted) as created, (select count(*)::int from moved) as moved`
      return row?.created ?? 0
    },
  }
}

export type ExportRepo = ReturnType<typeof createExportRepo>
