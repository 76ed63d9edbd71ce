import type { Logger } from './logger.ts'

export interface Shutdown {
  /** Adds a step. Steps run in reverse order of registration: last opened, first closed. */
  add(name: string, step: () => Promise<void> | void): void
  run(reason: string): Promise<void>
  /** Runs the steps on SIGTERM or SIGINT, then exits. */
  onSignals(): void
}

export function createShutdown(log: Logger): Shutdown {
  const steps: { name: string; step: () => Promise<void> | void }[] = []
  let running: Promise<void> | undefined
  const shutdown: Shutdown = {
    add(name, step) {
      steps.push({ name, step })
    },
    run(reason) {
      running ??= (async () => {
        log.info({ reason }, 'shutdown_started')
        for (const { name, step } of [...steps].reverse()) {
          const started = Date.now()
          try {
            await step()
            log.info({ step: name, ms: Date.now() - started }, 'shutdown_step_done')
          } catch (err) {
            log.error({ step: name, err }, 'shutdown_step_failed')
          }
        }
        log.info('shutdown_finished')
      })()
      return running
    },
    onSignals() {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          void shutdown.run(signal).finally(() => process.exit(0))
        })
      }
    },
  }
  return shutdown
}
