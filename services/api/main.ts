import { runProcess } from '../shared/process/run.ts'
import { apiRole } from './role.ts'

// The API alone (distributed mode): publishes request events to Kafka.
await runProcess('tally-api', { serving: apiRole, consumers: [] })
