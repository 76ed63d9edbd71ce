import { runProcess } from '../standalone/process.ts'

// The API alone (distributed mode): publishes request events to Kafka.
await runProcess('tally-api', { api: true, ingest: false, dispatcher: false })
