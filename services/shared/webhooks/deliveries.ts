import { randomUUID } from 'node:crypto'
import { type Sql, type TxSql, transaction } from '../postgres.ts'
import type { Attempt } from './attempt.ts'
import { announceWebhookChange } from './directory.ts'
import type { EventKind } from './payload.ts'
import { finalOutcome, type Next } from './retry-policy.ts'

export interface NewDelivery {
  webhookId: string
  /** The request a request.completed delivery is about; null for a score's (see eventKey). */
  requestId: string | null
  /**
   * A score delivery's identity, `score:<score id>:<version>`; absent for a request's, whose
   * identity is its request id.
   */
  eventKey?: string
  event: EventKind
  body: Buffer
  /** Claimed by this process at insert (sent straight away) rather than left due for any. */
  claimed: boolean
}

/**
 * What makes a delivery one of its kind for its webhook, as insert() keys what it inserted:
 * `webhookId:requestId` for a request's, `webhookId:score:<id>:<version>` for a score's.
 */
export const deliveryKey = (d: { webhookId: string; requestId: string | null; eventKey?: string | null }) =>
  `${d.webhookId}:${d.eventKey ?? d.requestId}`

/** A delivery held by a dispatcher for one attempt. */
export interface ClaimedDelivery {
  id: string
  webhookId: string
  /** Null for a score's delivery. */
  requestId: string | null
  body: Buffer
  roundAttempts: number
  /** This claim's token: outcomes are written only while the row still carries it. */
  claimToken: string
}

/** An attempt of a claimed delivery, and what follows it. */
export interface Completion extends Attempt {
  delivery: ClaimedDelivery
  next: Next
}

/** Bytes of delivery bodies in one insert statement (base64 in JSON: a third more). */
const STATEMENT_BODY_BYTES = 8 * 1024 * 1024

/** Deliveries in statement-sized parts: at most 1,000 each, and STATEMENT_BODY_BYTES of bodies. */
function* statements(deliveries: NewDelivery[]): Generator<NewDelivery[]> {
  let part: NewDelivery[] = []
  let bytes = 0
  for (const d of deliveries) {
    if (part.length > 0 && (part.length === 1_000 || bytes + d.body.length > STATEMENT_BODY_BYTES)) {
      yield part
      part = []
      bytes = 0
    }
    part.push(d)
    bytes += d.body.length
  }
  if (part.length > 0) yield part
}

// Postgres text cannot hold NUL.
const clean = (text: string | null) => (text === null ? null : text.replaceAll('\u0000', ''))

export function createDeliveryRepo(sql: Sql) {
  /**
   * Records attempts and what follows them, many in one statement; only under the claim they
   * were made under, on a row still pending: a late outcome never overwrites a newer one.
   *
   * Rows are found by primary key (`id = any(…)`) and by claim token alone: only a pending row
   * carries one (a check constraint says so). A `status = 'pending'` test here would let the
   * planner, misled by statistics older than a fast-growing backlog, read every pending row
   * through the due index for each batch instead (seen: 30,000 rows read per 100 written).
   */
  async function complete(completions: Completion[], db: Sql | TxSql = sql): Promise<void> {
    if (completions.length === 0) return
    const rows = completions.map(({ delivery, attemptedAt, result, next }) => ({
      id: delivery.id,
      claim_token: delivery.claimToken,
      status: next.status,
      delay_ms: next.status === 'pending' ? next.delayMs : null,
      attempted_at: attemptedAt.toISOString(),
      duration_ms: result.durationMs,
      response_status: result.status,
      response_body: clean(result.responseBody),
      error: clean(result.error),
    }))
    await db`
      with v as (
        select * from jsonb_to_recordset(${db.json(rows)}::jsonb) as v(
          id uuid, claim_token uuid, status text, delay_ms bigint, attempted_at timestamptz, duration_ms integer,
          response_status integer, response_body text, error text)
      ), locked as (
        -- in id order, as renew() locks them: the two never deadlock
        select d.id, d.claim_token from webhook_deliveries d join v on v.id = d.id and v.claim_token = d.claim_token
        where d.id = any(${rows.map((r) => r.id)}::uuid[])
        order by d.id
        for update of d
      ), u as (
        update webhook_deliveries d set
          status = v.status,
          claim_token = null,
          attempts = d.attempts + 1,
          round_attempts = d.round_attempts + 1,
          next_attempt_at = case when v.status = 'pending'
            then now() + make_interval(secs => v.delay_ms / 1000.0) end,
          last_attempt_at = v.attempted_at,
          last_response_status = v.response_status,
          last_response_body = v.response_body,
          last_error = v.error,
          last_duration_ms = v.duration_ms,
          delivered_at = case when v.status = 'delivered' then now() end
        -- by id and claim: an older outcome of the same delivery in this batch never applies
        from v join locked on locked.id = v.id and locked.claim_token = v.claim_token
        where d.id = v.id
        returning d.id, v.claim_token
      )
      insert into webhook_delivery_attempts
        (delivery_id, attempted_at, duration_ms, response_status, response_body, error)
      select v.id, v.attempted_at, v.duration_ms, v.response_status, v.response_body, v.error
      from v join u on u.id = v.id and u.claim_token = v.claim_token`
  }

  return {
    /**
     * Records deliveries, at most one per (webhook, request) and per (webhook, score version): a
     * redelivered event inserts nothing. Returns the ids of the rows it inserted, keyed by
     * {@link deliveryKey} (`webhookId:requestId` for a request's), and the
     * token of the claim on those inserted with `claimed`. One statement carries at most 1,000
     * deliveries and STATEMENT_BODY_BYTES of bodies (one larger body goes alone): the statement's
     * one JSON parameter stays far below what V8 and Postgres can hold.
     */
    async insert(
      deliveries: NewDelivery[],
      leaseMs: number,
    ): Promise<{ ids: Map<string, string>; claimToken: string }> {
      const claimToken = randomUUID()
      const inserted = new Map<string, string>()
      for (const part of statements(deliveries)) {
        const chunk = part.map((d) => ({
          webhook_id: d.webhookId,
          request_id: d.requestId,
          event_key: d.eventKey ?? null,
          event: d.event,
          body: d.body.toString('base64'),
          claimed: d.claimed,
        }))
        const rows = await sql<
          { id: string; webhook_id: string; request_id: string | null; event_key: string | null }[]
        >`
          insert into webhook_deliveries (webhook_id, request_id, event_key, event, body, next_attempt_at, claim_token)
          select v.webhook_id, v.request_id, v.event_key, v.event, decode(v.body, 'base64'),
                 case when v.claimed then now() + make_interval(secs => ${leaseMs / 1000}) else now() end,
                 case when v.claimed then ${claimToken}::uuid end
          from jsonb_to_recordset(${sql.json(chunk)}::jsonb)
               as v(webhook_id uuid, request_id uuid, event_key text, event text, body text, claimed boolean)
          -- a webhook deleted or disabled since this process cached it gets nothing
          join webhooks w on w.id = v.webhook_id and w.state = 'active'
          -- either identity: (webhook_id, request_id), or (webhook_id, event_key) of a score's
          on conflict do nothing
          returning id, webhook_id, request_id, event_key`
        for (const r of rows)
          inserted.set(
            deliveryKey({ webhookId: r.webhook_id, requestId: r.request_id, eventKey: r.event_key }),
            r.id,
          )
      }
      return { ids: inserted, claimToken }
    },

    /**
     * Takes up to `limit` due deliveries, with at most `maxBytes` of bodies (at least one), for
     * this process by moving them one lease ahead under a new claim token; `held` are ids this
     * process holds already (never claimed twice). `more`: due deliveries were left for want of
     * bytes.
     */
    async claimDue(
      limit: number,
      leaseMs: number,
      held: string[] = [],
      maxBytes: number = Number.MAX_SAFE_INTEGER,
    ): Promise<{ claimed: ClaimedDelivery[]; more: boolean }> {
      const claimToken = randomUUID()
      const rows = await sql<
        {
          id: string
          webhook_id: string
          request_id: string | null
          body: Buffer
          round_attempts: number
          due: number
        }[]
      >`
        with due as (
          select id, next_attempt_at, octet_length(body) as size from webhook_deliveries
          where status = 'pending' and next_attempt_at <= now() and id <> all(${held}::uuid[])
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        ), fitting as (
          -- the first ones whose bodies fit in maxBytes, and always the first one
          select id from (
            select id, sum(size) over w as running, row_number() over w as n
            from due window w as (order by next_attempt_at, id)
          ) sized
          where running <= ${maxBytes}::bigint or n = 1
        )
        update webhook_deliveries d
        set next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}), claim_token = ${claimToken}
        from fitting where d.id = fitting.id
        returning d.id, d.webhook_id, d.request_id, d.body, d.round_attempts, (select count(*)::int from due) as due`
      const claimed = rows.map((r) => ({
        id: r.id,
        webhookId: r.webhook_id,
        requestId: r.request_id,
        body: r.body,
        roundAttempts: r.round_attempts,
        claimToken,
      }))
      return { claimed, more: (rows[0]?.due ?? 0) > rows.length }
    },

    /**
     * Pushes the lease of held deliveries one lease ahead, for those still under this process's
     * claim; returns the ids whose claim is gone (taken over, completed, retried or deleted).
     */
    async renew(held: ClaimedDelivery[], leaseMs: number): Promise<string[]> {
      if (held.length === 0) return []
      const ids = held.map((h) => h.id)
      // Rows are locked in id order, as complete() locks them: the two never deadlock. Found by
      // primary key, see complete().
      const rows = await sql<{ id: string }[]>`
        with mine as (
          select d.id from webhook_deliveries d
          join unnest(${ids}::uuid[], ${held.map((h) => h.claimToken)}::uuid[]) as v(id, token)
            on d.id = v.id and d.claim_token = v.token
          where d.id = any(${ids}::uuid[])
          order by d.id
          for update of d
        )
        update webhook_deliveries d set next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
        from mine where d.id = mine.id
        returning d.id`
      const kept = new Set(rows.map((r) => r.id))
      return held.filter((h) => !kept.has(h.id)).map((h) => h.id)
    },

    /** Hands claimed deliveries back (on shutdown), due at once for whichever process is next. */
    async release(held: ClaimedDelivery[]): Promise<void> {
      if (held.length === 0) return
      const ids = held.map((h) => h.id)
      await sql`
        update webhook_deliveries d set next_attempt_at = now(), claim_token = null
        from unnest(${ids}::uuid[], ${held.map((h) => h.claimToken)}::uuid[]) as v(id, token)
        where d.id = any(${ids}::uuid[]) and d.id = v.id and d.claim_token = v.token`
    },

    complete,

    /**
     * Records a test event's attempt as a delivery of its own, the way the worker records its
     * attempts: the row is inserted under a claim and its outcome written by complete(), in one
     * transaction, so no dispatcher ever sees it pending. A test is never retried and never
     * disables its webhook; a disabled webhook is tested too. False, recording nothing, when the
     * webhook is gone.
     */
    async recordTest(
      delivery: { id: string; webhookId: string; requestId: string; body: Buffer },
      { attemptedAt, result }: Attempt,
    ): Promise<boolean> {
      const claimToken = randomUUID()
      return transaction(sql, async (tx) => {
        const inserted = await tx`
          insert into webhook_deliveries (id, webhook_id, request_id, event, body, next_attempt_at, claim_token)
          select ${delivery.id}, w.id, ${delivery.requestId}, ${'webhook.test' satisfies EventKind},
                 ${delivery.body}, now(), ${claimToken}
          from webhooks w where w.id = ${delivery.webhookId}
          for share of w
          returning id`
        if (inserted.length === 0) return false
        const claimed = { ...delivery, roundAttempts: 0, claimToken }
        await complete([{ delivery: claimed, attemptedAt, result, next: finalOutcome(result) }], tx)
        return true
      })
    },

    /** A receiver answered 410 Gone: the webhook is disabled and its pending deliveries fail. */
    async disable(webhookId: string, reason: string): Promise<void> {
      await transaction(sql, async (tx) => {
        const [row] = await tx<{ organization_id: string }[]>`
          update webhooks set state = 'disabled', disabled_reason = ${reason}
          where id = ${webhookId} returning organization_id`
        if (!row) return
        // Rows locked in id order, as complete() and renew() lock them: the three never deadlock.
        await tx`
          with pending as (
            select id from webhook_deliveries
            where webhook_id = ${webhookId} and status = 'pending'
            order by id
            for update
          )
          update webhook_deliveries d
          set status = 'failed', next_attempt_at = null, claim_token = null, last_error = 'webhook disabled: ' || ${reason}
          from pending where d.id = pending.id`
        await announceWebhookChange(tx, row.organization_id, webhookId)
      })
    },
  }
}

export type DeliveryRepo = ReturnType<typeof createDeliveryRepo>
