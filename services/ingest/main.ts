import { runProcess } from '../standalone/process.ts'

// Consumer group tally-ingest: request events from Kafka into ClickHouse.
await runProcess('tally-ingest', { api: false, ingest: true, dispatcher: false })
