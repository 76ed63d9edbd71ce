import { runProcess } from '../shared/process/run.ts'
import { ingestRole } from './role.ts'

// Consumer group tally-ingest: request events from Kafka into ClickHouse.
await runProcess('tally-ingest', { consumers: [ingestRole] })
