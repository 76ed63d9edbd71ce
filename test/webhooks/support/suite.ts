import { afterAll, beforeAll } from 'vitest'
import type { Roles } from '../../../services/standalone/compose.ts'
import { startTestTally, type TestTally } from '../../support/harness.ts'
import { ownDatabase } from './database.ts'
import { type Certificates, makeCertificates, type Receiver, startReceiver } from './receiver.ts'

export interface WebhookSuite {
  tally: TestTally
  receiver: Receiver
  certs: Certificates
}

/**
 * Starts, for the calling test file, a real HTTPS receiver with a fresh CA, a database of its own
 * and Tally trusting that CA; stops them after the file. `env` adds Tally settings; `roles`
 * leaves some out (a test driving a worker of its own runs without Tally's dispatcher).
 */
export function webhookSuite(env: Record<string, string> = {}, roles?: Roles): WebhookSuite {
  const suite = {} as WebhookSuite
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined
  beforeAll(async () => {
    suite.certs = makeCertificates()
    suite.receiver = await startReceiver(suite.certs)
    database = await ownDatabase()
    suite.tally = await startTestTally({
      env: { DATABASE_URL: database.url, TALLY_WEBHOOK_CA_FILE: suite.certs.caFile, ...env },
      // Roles apart are processes apart, which talk through Kafka.
      ...(roles ? { roles, kafka: true } : {}),
    })
  })
  afterAll(async () => {
    await suite.tally?.close()
    await suite.receiver?.close()
    await database?.drop()
    suite.certs?.remove()
  })
  return suite
}
