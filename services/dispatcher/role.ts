import { type ConsumerRole, needed } from '../shared/process/role.ts'
import { startDispatcher } from './dispatcher.ts'

/** Request events into webhook deliveries, and the worker that sends them. */
export const dispatcherRole: ConsumerRole = {
  group: 'tally-dispatcher',
  deadLettersUndecodable: false,
  needs: { postgres: true },
  async start({ config, engines, log, shutdown }) {
    const dispatcher = await startDispatcher(
      config,
      needed(engines.postgres, 'postgres', 'dispatcher').sql,
      log,
    )
    shutdown.add('dispatcher', () => dispatcher.stop())
    return dispatcher.handler
  },
}
