import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import {
  EXPORTS_CHANNEL,
  type ExportFormat,
  FORMATS,
  type Manifest,
  manifest,
} from '../shared/exports/contract.ts'
import { type Sql, transaction } from '../shared/postgres.ts'

/** An export an exporter holds under a lease. */
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

/** An organization whose export files of the last hour reach its limit, and when they fall below. */
export interface OverLimit {
  organizationId: string
  bytes: number
  until: Date
}

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
const overLimit = z.object({ organization_id: z.string(), bytes: z.coerce.number(), until: z.date() }).array()

/** The advisory lock export claims take turns under (beside the migrator's 7461679 and bootstrap's 7461680). */
const CLAIM_LOCK = 7_461_681

// Postgres text cannot hold NUL; an error message may quote anything.
const clean = (text: string) => text.replaceAll('\u0000', '').slice(0, 2_000)

/**
 * What the exporter does with the export tables: claim jobs in turns across organizations under
 * leases, write their outcomes, count the bytes they store, hold back organizations past their
 * bytes per hour, and turn schedules into jobs.
 */
export function createExportJobs(sql: Sql) {
  const json = (value: unknown) => sql.json(value as Parameters<typeof sql.json>[0])
  // A job is due when queued and its time has come, or running under a lease that expired (the
  // process holding it died).
  const due = sql`((e.status = 'queued' and e.next_attempt_at <= now())
    or (e.status = 'running' and e.lease_expires_at < now()))`
  // The organizations with a due job and the due time of their oldest, each half through its own
  // partial index (the OR above would read the whole table).
  const dueOrganizations = sql`
    (select d.organization_id, min(d.next_attempt_at) as first_due
     from (select e.organization_id, e.next_attempt_at from exports e
           where e.status = 'queued' and e.next_attempt_at <= now()
           union all
           select e.organization_id, e.next_attempt_at from exports e
           where e.status = 'running' and e.lease_expires_at < now()) d
     group by d.organization_id)`
  // The organizations whose files of the last hour hold at least `max` bytes, and how many.
  const pastLimit = (max: number) => sql`
    (select b.organization_id, sum(b.bytes) as bytes from export_bytes b
     where b.written_at > now() - interval '1 hour'
     group by b.organization_id having sum(b.bytes) >= ${max})`

  return {
    /**
     * Takes one due job, organizations in turns: among the organizations with a due job and
     * under `maxBytesPerHour`, the one whose last job started longest ago (never: first; ties:
     * the oldest due job first), then that organization's oldest due job. One organization's many
     * queued jobs so delay another's single job by at most one job per free slot. Two
     * exporters never take the same row (SKIP LOCKED, then a fresh token).
     *
     * Claims take turns across exporters (a transaction-scoped advisory lock, held for the one
     * statement): a claim reads the turns as the claim before it left them. Without it, exporters
     * claiming at the same moment would all read the same oldest turn and give that organization
     * one job each.
     */
    async claim(leaseMs: number, maxBytesPerHour: number): Promise<ClaimedExport | null> {
      const leaseToken = randomUUID()
      const rows = await transaction(sql, async (tx) => {
        await tx`select pg_advisory_xact_lock(${CLAIM_LOCK})`
        return tx`
        with ready as (
          select o.organization_id, o.first_due, t.last_started_at
          from ${dueOrganizations} o
          left join export_turns t on t.organization_id = o.organization_id
          where o.organization_id not in (select p.organization_id from ${pastLimit(maxBytesPerHour)} p)
        ),
        picked as (
          select j.id, r.organization_id
          -- Ordered before the join, so that only the first organization with a job free to lock
          -- is locked (ordered after it, every organization's oldest job would be).
          from (select * from ready order by last_started_at nulls first, first_due, organization_id) r
          cross join lateral (
            select e.id from exports e
            where e.organization_id = r.organization_id and ${due}
            order by e.next_attempt_at, e.created_at, e.id
            limit 1
            for update skip locked
          ) j
          order by r.last_started_at nulls first, r.first_due, r.organization_id
          limit 1
        ),
        turn as (
          insert into export_turns (organization_id, last_started_at)
          select organization_id, clock_timestamp() from picked
          on conflict (organization_id) do update set last_started_at = excluded.last_started_at
        )
        update exports e set status = 'running', lease_token = ${leaseToken},
          lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}),
          attempts = e.attempts + 1, started_at = coalesce(e.started_at, now()), waiting_reason = null
        from picked where e.id = picked.id
        returning e.id, e.organization_id, e.window_from, e.window_to, e.filter, e.format, e.attempts`
      })
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

    /**
     * Organizations with jobs due now (queued, or running under an expired lease) whose export
     * files of the last hour hold at least `maxBytesPerHour`, with the moment enough of those
     * files are an hour old to bring them under it.
     */
    async overLimit(maxBytesPerHour: number): Promise<OverLimit[]> {
      const rows = await sql`
        select p.organization_id, p.bytes, (
          select min(x.written_at) + interval '1 hour' from (
            select b.written_at,
              coalesce(sum(b.bytes) over (order by b.written_at desc
                rows between unbounded preceding and 1 preceding), 0) as newer
            from export_bytes b
            where b.organization_id = p.organization_id and b.written_at > now() - interval '1 hour'
          ) x where x.newer < ${maxBytesPerHour}) as until
        from ${pastLimit(maxBytesPerHour)} p
        where exists (select 1 from exports e where e.organization_id = p.organization_id and ${due})`
      return overLimit
        .parse(rows)
        .map((r) => ({ organizationId: r.organization_id, bytes: r.bytes, until: r.until }))
    },

    /**
     * Holds the organization's due jobs back until `until`, with the reason shown: queued ones,
     * and running ones whose lease expired (their process died; the attempt counts), which
     * become queued again. No due job is left for the exporters to find and pass over.
     */
    async holdBack(organizationId: string, until: Date, reason: string): Promise<number> {
      const rows = await sql`
        update exports set status = 'queued', lease_token = null, lease_expires_at = null,
          next_attempt_at = ${until}, waiting_reason = ${clean(reason)}
        where id in (
          select e.id from exports e
          where e.organization_id = ${organizationId} and ${due}
          for update skip locked)
        returning id`
      return rows.length
    },

    /** Counts a stored file against its organization's bytes per hour. */
    async recordBytes(organizationId: string, bytes: number): Promise<void> {
      await sql`insert into export_bytes (organization_id, bytes) values (${organizationId}, ${bytes})`
    },

    /** Forgets files stored more than an hour ago: they count against nothing any more. */
    async forgetOldBytes(): Promise<void> {
      await sql`delete from export_bytes where written_at <= now() - interval '1 hour'`
    },

    /** Milliseconds until the next queued job comes due or a lease runs out; null: none. */
    async nextDueInMs(): Promise<number | null> {
      // least() skips a null (no such job); both null, it is null.
      const [row] = await sql<{ ms: number | null }[]>`
        select (extract(epoch from least(
          (select min(next_attempt_at) from exports where status = 'queued'),
          (select min(lease_expires_at) from exports where status = 'running')) - now()) * 1000)::float8 as ms`
      return row?.ms == null ? null : Math.max(0, row.ms)
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

    /**
     * Gives the export back at shutdown, due at once: the interrupted attempt does not count.
     * The other exporters are told (NOTIFY), so one of them takes it now.
     */
    async release(job: ClaimedExport): Promise<boolean> {
      const rows = await sql`
        with released as (
          update exports set status = 'queued', lease_token = null, lease_expires_at = null,
            attempts = greatest(attempts - 1, 0), next_attempt_at = now()
          where id = ${job.id} and lease_token = ${job.leaseToken} returning id
        )
        select id, pg_notify(${EXPORTS_CHANNEL}, '') from released`
      return rows.length > 0
    },

    /**
     * Gives every ended window of due schedules its export, at most `maxWindows` per schedule
     * per call, and never more than leave `maxPending` exports of an organization queued or
     * running (POSTed ones included): its schedules share that room, the oldest window first, and
     * the rest come on later calls as those finish. A window has ended once its end is
     * `settleMs` in the past. So a tenant's hundred backfilling schedules queue no more than its
     * own few, and never flood the queue ahead of other organizations' exports.
     *
     * Windows follow each other without gaps, and a window already given an export (another
     * process got there first) is not given a second. The organizations are locked first, as
     * `POST /v1/exports` locks its organization, so their count of pending exports is exact; one
     * locked elsewhere just now is passed over until the next call, holding up no other. Tells
     * every exporter when it created any. The schedules of an organization whose deletion began
     * (deleted_organizations) create none. Returns how many exports it created.
     */
    async enqueueScheduled(settleMs: number, maxWindows: number, maxPending: number): Promise<number> {
      const horizon = sql`now() - make_interval(secs => ${settleMs / 1000})`
      const step = sql`case s.period when 'hourly' then interval '1 hour' else interval '24 hours' end`
      return transaction(sql, async (tx) => {
        // Organizations with room for another export only: fifty whose queues are full must not
        // take every turn from the rest. The oldest window first.
        const orgs = await tx`
          select o.id from organizations o
          join (
            select s.organization_id, min(s.next_window_start) as oldest from export_schedules s
            -- the first condition reads export_schedules_due: no period is shorter than an hour
            where s.next_window_start <= ${horizon} - interval '1 hour' and s.next_window_start + ${step} <= ${horizon}
            group by s.organization_id
          ) d on d.organization_id = o.id
          where (select count(*) from exports e
                 where e.organization_id = o.id and e.status in ('queued', 'running')) < ${maxPending}
            and not exists (select 1 from deleted_organizations x where x.organization_id = o.id)
          order by d.oldest, o.id
          limit 50
          for update of o skip locked`
        if (orgs.length === 0) return 0
        const [row] = await tx<{ created: number }[]>`
          with due as (
            select s.id, s.organization_id, s.format, s.filter, s.next_window_start, ${step} as step,
                   least(${maxWindows}::int,
                         floor(extract(epoch from ${horizon} - s.next_window_start) / extract(epoch from ${step}))::int) as ended
            from export_schedules s
            where s.organization_id in ${tx(orgs.map((o) => o.id))}
              and s.next_window_start + ${step} <= ${horizon}
            for update of s skip locked
          ),
          room as (
            select d.*, greatest(0, least(d.ended,
              ${maxPending}::int
              - (select count(*)::int from exports e
                 where e.organization_id = d.organization_id and e.status in ('queued', 'running'))
              - coalesce(sum(d.ended) over (partition by d.organization_id order by d.next_window_start, d.id
                  rows between unbounded preceding and 1 preceding), 0)::int)) as n
            from due d
          ),
          windows as (
            select r.id as schedule_id, r.organization_id, r.format, r.filter,
                   r.next_window_start + r.step * g.i as window_from,
                   r.next_window_start + r.step * (g.i + 1) as window_to
            from room r, generate_series(0, r.n - 1) as g(i)
            where r.next_window_start + r.step * (g.i + 1) <= ${horizon}
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
        const created = row?.created ?? 0
        if (created > 0) await tx`select pg_notify(${EXPORTS_CHANNEL}, '')`
        return created
      })
    },
  }
}

export type ExportJobs = ReturnType<typeof createExportJobs>
