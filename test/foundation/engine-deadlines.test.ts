import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../services/shared/config.ts'
import { openPostgres } from '../../services/shared/postgres.ts'
import { silentServer } from '../support/silent-server.ts'

// An engine that accepts connections and never answers: every wait for it ends, naming the engine,
// where it is, and how long it waited.
describe('engines that never answer', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>
  beforeAll(async () => {
    silent = await silentServer()
  })
  afterAll(() => silent?.close())
  const log = pino({ level: 'silent' })

  it('Postgres: the start fails after TALLY_POSTGRES_CONNECT_TIMEOUT, naming it', async () => {
    expect(loadConfig({}).TALLY_POSTGRES_CONNECT_TIMEOUT).toBe(10_000)
    const config = loadConfig({
      DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${silent.port}/tally`,
      TALLY_POSTGRES_CONNECT_TIMEOUT: '300ms',
    })
    const opening = openPostgres(config, log)
    await expect(opening).rejects.toThrowError(
      `no connection to Postgres at postgres://postgres:***@127.0.0.1:${silent.port}/tally within 300 ms (TALLY_POSTGRES_CONNECT_TIMEOUT)`,
    )
    expect(silent.accepted()).toBeGreaterThan(0)
  })
})
