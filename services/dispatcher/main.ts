import { runProcess } from '../shared/process/run.ts'
import { dispatcherRole } from './role.ts'

// Consumer group tally-dispatcher: request events from Kafka into webhook deliveries.
await runProcess('tally-dispatcher', { consumers: [dispatcherRole] })
