import { runProcess } from '../shared/process/run.ts'
import { exporterRole } from './role.ts'

// Export jobs and schedules, from Postgres to the object store; no Kafka. /livez, /readyz and
// /metrics on TALLY_METRICS_PORT.
await runProcess('tally-exporter', { consumers: [], workers: [exporterRole] })
