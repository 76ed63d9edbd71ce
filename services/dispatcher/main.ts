import { runProcess } from '../standalone/process.ts'

// Consumer group tally-dispatcher: request events from Kafka into webhook deliveries.
await runProcess('tally-dispatcher', { api: false, ingest: false, dispatcher: true })
