import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { SCORE_TABLE } from '../../services/shared/clickhouse/annotation-tables.ts'
import { body, count, insert, sessions } from '../sessions/client.ts'
import { sampleEvent } from '../support/events.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { scoreRow } from '../support/scores.ts'

// The backup procedure of docs/operations.md ("Backups"), as written there, on the real engine:
// ClickHouse's BACKUP DATABASE … TO File() and RESTORE DATABASE … FROM File() of Tally's database on
// the embedded server (its `backups` folder), then Tally started again on what was restored. The
// embedded engine cannot write a backup to S3 (libchdb 26.7 leaves the backups IO pool unset: "The
// BackupsIOThreadPool is not initialized"); a test below shows that limit, so that it is noticed when
// an upgrade lifts it.
const DATABASE = `test_${process.pid}_backup`

/** Rows per table of Tally's ClickHouse database, the migrations' ledger included. */
async function rowsPerTable(tally: TestTally): Promise<Record<string, number>> {
  const rs = await tally.clickhouse.query({
    query: `SELECT name, toUInt64(total_rows) AS n FROM system.tables
            WHERE database = currentDatabase() AND total_rows IS NOT NULL ORDER BY name`,
    format: 'JSONEachRow',
  })
  return Object.fromEntries((await rs.json<{ name: string; n: string }>()).map((r) => [r.name, Number(r.n)]))
}

describe('backup and restore of the ClickHouse database (docs/operations.md "Backups")', () => {
  let tally: TestTally | undefined
  afterAll(async () => {
    await tally?.clickhouse.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
    await tally?.close()
  })

  it('restores every table to what was backed up, and Tally serves the same answers from it', async () => {
    const env = { CLICKHOUSE_DATABASE: DATABASE }
    tally = await startTestTally({ env })
    const org = await tally.newOrg()
    const events = Array.from({ length: 40 }, (_, i) =>
      sampleEvent({
        organization_id: org.organizationId,
        session_id: `session-${i % 8}`,
        created_at: new Date(Date.UTC(2026, 10, 1, i % 24, i)),
      }),
    )
    await insert(tally, events)
    await tally.clickhouse.insert({
      table: SCORE_TABLE,
      values: [scoreRow(org.organizationId, { session_id: 'session-1' }, '2026-11-01 10:00:00.000')],
      format: 'JSONEachRow',
    })
    const page = await sessions(tally, org, body())
    const total = await count(tally, org, body())
    expect(total).toBe(8)
    const before = await rowsPerTable(tally)
    expect(before.request_response_rmt).toBe(40)

    // The statements of the docs, with a fresh backup name.
    const target = `File('${randomUUID()}')`
    const backup = await tally.clickhouse.query({
      query: `BACKUP DATABASE ${DATABASE} TO ${target}`,
      format: 'JSONEachRow',
    })
    expect((await backup.json<{ status: string }>())[0]?.status).toBe('BACKUP_CREATED')
    await tally.close()

    // Lost: the database is dropped (as a disk would be), then restored from the backup.
    tally = await startTestTally({ env })
    await tally.clickhouse.command({ query: `DROP DATABASE ${DATABASE} SYNC` })
    await tally.close()
    tally = undefined
    const admin = await startTestTally({ env: { CLICKHOUSE_DATABASE: `${DATABASE}_admin` } })
    try {
      await admin.clickhouse.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
      const restore = await admin.clickhouse.query({
        query: `RESTORE DATABASE ${DATABASE} FROM ${target}`,
        format: 'JSONEachRow',
      })
      expect((await restore.json<{ status: string }>())[0]?.status).toBe('RESTORED')
    } finally {
      await admin.clickhouse.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}_admin` })
      await admin.close()
    }

    // Tally starts on the restored database (its ledger says every migration ran) and answers as before.
    tally = await startTestTally({ env })
    expect(await rowsPerTable(tally)).toEqual(before)
    expect(await sessions(tally, org, body())).toEqual(page)
    expect(await count(tally, org, body())).toBe(total)
  })

  it('writes a backup to S3 on a ClickHouse server, and not on the embedded engine (libchdb 26.7)', async () => {
    const s3 = engines().s3
    if (!s3) throw new Error('this suite needs S3 (S3_ENDPOINT, or java + mvn for infra/local)')
    const probe = await startTestTally({ env: { CLICKHOUSE_DATABASE: `${DATABASE}_s3` } })
    try {
      const backup = probe.clickhouse.command({
        query: `BACKUP DATABASE ${DATABASE}_s3 TO S3('${s3.endpoint}/${s3.bucket}/backups/${randomUUID()}', '${s3.accessKeyId}', '${s3.secretAccessKey}')`,
      })
      // A clickhouse-server (CLICKHOUSE_URL) writes it, as docs/operations.md says production does.
      if (engines().clickhouseSource.startsWith('embedded'))
        await expect(backup).rejects.toThrow(/BackupsIOThreadPool is not initialized/)
      else await expect(backup).resolves.toBeDefined()
    } finally {
      await probe.clickhouse.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}_s3` })
      await probe.close()
    }
  })
})
