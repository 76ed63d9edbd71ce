import type { Logger } from './logger.ts'

export interface Shutdown {
  /** Adds a step. Steps run in reverse order of registration: last opened, first closed. */
  add(name: string, step: () => Promise<void> | void): void
  run(reason: string): Promise<void>
  /** Whether run() was called: the process is on its way out. */
  started(): boolean
  /** Runs the steps on SIGTERM or SIGINT, then exits. */
  onSignals(): void
}

/**
 * One ordered shutdown. A step still running after `stepTimeoutMs` (a dependency that no longer
 * answers) is abandoned, named in the log, and the next step starts: the process always gets to
 * exit, in at most steps × stepTimeoutMs.
 */
export function createShutdown(log: Logger, stepTimeoutMs: number): Shutdown {
  const steps: { name: string; step: () => Promise<void> | void }[] = []
  let running: Promise<void> | undefined

  const runStep = async (
    name: string,
    step: () => Promise<void> | void,
  ): Promise<'done' | 'failed' | 'abandoned'> => {
    const started = Date.now()
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'abandoned'>((resolve) => {
      timer = setTimeout(() => resolve('abandoned'), stepTimeoutMs)
    })
    try {
      const done = (async () => {
        await step()
        return 'done' as const
      })()
      if ((await Promise.race([done, deadline])) === 'done') {
        log.info({ step: name, ms: Date.now() - started }, 'shutdown_step_done')
        return 'done'
      }
      log.error({ step: name, ms: Date.now() - started }, 'shutdown_step_abandoned')
      return 'abandoned'
    } catch (err) {
      log.error({ step: name, err }, 'shutdown_step_failed')
      return 'failed'
    } finally {
      clearTimeout(timer)
    }
  }

  const shutdown: Shutdown = {
    add(name, step) {
      steps.push({ name, step })
    },
    run(reason) {
      running ??= (async () => {
        log.info({ reason }, 'shutdown_started')
        const abandoned: string[] = []
        for (const { name, step } of [...steps].reverse()) {
          if ((await runStep(name, step)) === 'abandoned') abandoned.push(name)
        }
        log.info(abandoned.length > 0 ? { abandoned } : {}, 'shutdown_finished')
      })()
      return running
    },
    started: () => running !== undefined,
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
