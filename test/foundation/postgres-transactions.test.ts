import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPostgresUnavailable, type TxSql, transaction } from '../../services/shared/postgres.ts'
import { engines } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'

// A connection cut mid-transaction used to end the process: postgres.js's sql.begin wrote its
// ROLLBACK to the closed socket from a setImmediate (an uncaught TypeError). Vitest fails a file
// on any uncaught exception, so every test here also checks that none was thrown.

const table = `tx_cut_${randomUUID().replaceAll('-', '').slice(0, 12)}`
const options = { onnotice: () => {}, transform: { undefined: null } }
const admin = postgres(engines().postgresUrl, { ...options, max: 2 })
const sql = postgres(engines().postgresUrl, { ...options, max: 1 })

beforeAll(async () => {
  await admin.unsafe(`create table ${table} (id text primary key)`)
})
afterAll(async () => {
  await admin.unsafe(`drop table if exists ${table}`)
  await Promise.all([admin.end(), sql.end()])
})

const insert = (tx: TxSql | postgres.Sql, id: string) => tx`insert into ${tx(table)} (id) values (${id})`
const stored = async (id: string) =>
  (await admin<{ id: string }[]>`select id from ${admin(table)} where id = ${id}`).length > 0

/** Terminates the backend of the transaction that runs `statement` once it is seen running. */
async function terminateWhenRunning(marker: string): Promise<void> {
  const pid = await waitFor(
    async () => {
      const [row] = await admin<{ pid: number }[]>`
        select pid from pg_stat_activity where query like ${`%${marker}%`} and pid <> pg_backend_pid()`
      return row?.pid
    },
    { what: `a backend running ${marker}` },
  )
  await admin`select pg_terminate_backend(${pid})`
}

/** A pool statement that works: the pool took the cut connection back and reconnected it. */
async function poolServes() {
  expect(await sql`select 1 as one`).toEqual([{ one: 1 }])
}

describe('transaction() on a connection cut mid-transaction', () => {
  it('rejects with CONNECTION_CLOSED, keeps nothing it wrote, and the next transaction commits', async () => {
    const id = randomUUID()
    const marker = `cut_${randomUUID().slice(0, 8)}`
    // Its rejection is taken at once: it may come before terminateWhenRunning returns (the cut
    // connection's close and the terminating statement's answer arrive in either order).
    const cut = transaction(sql, async (tx) => {
      await insert(tx, id)
      await tx.unsafe(`select pg_sleep(30) as ${marker}`)
    }).then(
      () => null,
      (e: unknown) => e,
    )
    await terminateWhenRunning(marker)
    const err = await cut
    expect((err as { code?: string }).code).toBe('CONNECTION_CLOSED')
    expect(isPostgresUnavailable(err)).toBe(true)
    expect(await stored(id)).toBe(false)

    const next = randomUUID()
    await transaction(sql, (tx) => insert(tx, next))
    expect(await stored(next)).toBe(true)
    await poolServes()
  })

  it('sends nothing after a cut between statements, even once the pool has reconnected the connection', async () => {
    const before = randomUUID()
    const after = randomUUID()
    let cutDone!: () => void
    const cutSeen = new Promise<void>((r) => {
      cutDone = r
    })
    const marker = `idle_${randomUUID().slice(0, 8)}`
    let afterCut: unknown = 'not run'
    const cut = transaction(sql, async (tx) => {
      await insert(tx, before)
      await tx.unsafe(`select 1 as ${marker}`)
      await cutSeen
      // The work goes on as if nothing happened: this insert must not run anywhere.
      afterCut = await insert(tx, after).then(
        () => 'ran',
        (e: { code?: string }) => e.code,
      )
      return 'finished'
    })
    // sql.begin rejects as soon as the connection closes, while the work still waits.
    const outcome = cut.then(
      () => null,
      (e: { code?: string }) => e.code,
    )
    const pid = await waitFor(
      async () => {
        const [row] = await admin<{ pid: number }[]>`
          select pid from pg_stat_activity where query like ${`%${marker}%`} and state = 'idle in transaction'`
        return row?.pid
      },
      { what: 'the transaction idle after its marker' },
    )
    // With a statement queued on the pool (max 1) when the connection closes, the pool reconnects
    // that same connection object at once: a statement sent on it would run outside the transaction.
    const queued = sql`select 2 as two`
    await admin`select pg_terminate_backend(${pid})`
    expect(await queued).toEqual([{ two: 2 }])
    expect(await outcome).toBe('CONNECTION_CLOSED')
    cutDone()
    await waitFor(() => afterCut !== 'not run', { what: 'the work to send its statement after the cut' })
    expect(afterCut).toBe('CONNECTION_CLOSED')
    expect(await stored(before)).toBe(false)
    expect(await stored(after)).toBe(false)
    await poolServes()
  })

  it('rejects statements queued behind the one that was cut instead of leaving them pending', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()]
    const marker = `queued_${randomUUID().slice(0, 8)}`
    const cut = transaction(sql, (tx) =>
      Promise.allSettled([
        tx.unsafe(`select pg_sleep(30) as ${marker}`),
        ...ids.map((id) => insert(tx, id)),
      ]).then((results) =>
        results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok')),
      ),
    )
    // Taken at once: the rejection may come before terminateWhenRunning returns.
    const outcome = cut.then(
      () => 'committed',
      (e: { code?: string }) => e.code,
    )
    await terminateWhenRunning(marker)
    // The work itself swallowed the failures: the transaction still must not commit.
    expect(await outcome).toBe('CONNECTION_CLOSED')
    for (const id of ids) expect(await stored(id)).toBe(false)
    const next = randomUUID()
    await transaction(sql, (tx) => insert(tx, next))
    expect(await stored(next)).toBe(true)
  })
})

describe('transaction() on a healthy connection', () => {
  it('commits what the work wrote and answers its result', async () => {
    const id = randomUUID()
    const result = await transaction(sql, async (tx) => {
      await insert(tx, id)
      return 'done'
    })
    expect(result).toBe('done')
    expect(await stored(id)).toBe(true)
  })

  it('rolls back when the work throws, and gives the connection back to the pool', async () => {
    const id = randomUUID()
    const failure = new Error('work failed')
    await expect(
      transaction(sql, async (tx) => {
        await insert(tx, id)
        throw failure
      }),
    ).rejects.toBe(failure)
    expect(await stored(id)).toBe(false)
    // max: 1: the pool answers only if the connection was released, outside any transaction.
    // The insert took a transaction id: a session still in that transaction would show it.
    expect(await sql`select txid_current_if_assigned() as xid`).toEqual([{ xid: null }])
  })

  it('rolls back when a statement fails, and the next transaction sees a clean session', async () => {
    const id = randomUUID()
    await expect(
      transaction(sql, async (tx) => {
        await insert(tx, id)
        await insert(tx, id)
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await stored(id)).toBe(false)
    expect(isPostgresUnavailable({ code: '23505' })).toBe(false)
    await transaction(sql, (tx) => insert(tx, id))
    expect(await stored(id)).toBe(true)
  })
})
