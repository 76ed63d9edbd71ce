import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../services/shared/net.ts'
import { spawnCommand, stopTally, type TallyProcess, waitForOutput } from './processes.ts'

/**
 * A Kafka broker of a test's own (infra/local/kafka.sh serve): fixed ports and data directory, so
 * the test can stop it and start the same broker again while Tally runs against it.
 */
export async function ownBroker() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-kafka-'))
  const port = await freePort()
  const controllerPort = await freePort()
  let running: TallyProcess | undefined
  return {
    brokers: `127.0.0.1:${port}`,
    /** Starts the broker (unless it runs) and waits until it says it serves. */
    async start() {
      if (running && running.child.exitCode === null) return
      const p = spawnCommand(
        'bash',
        ['infra/local/kafka.sh', 'serve', dir, String(port), String(controllerPort)],
        {
          ...process.env,
        },
      )
      running = p
      await waitForOutput(p, (out) => out.includes('Kafka Server started'), {
        what: `the broker on port ${port} to start`,
        timeoutMs: 90_000,
      })
    },
    /** SIGKILL: the broker dies at once, as with a machine lost; its data stays for start(). */
    async kill() {
      if (!running || running.child.exitCode !== null) return
      const gone = running.exited
      running.child.kill('SIGKILL')
      await gone
      running = undefined
    },
    /** SIGSTOP: the broker hangs, its connections open and unanswered, until thaw(). */
    freeze() {
      running?.child.kill('SIGSTOP')
    },
    thaw() {
      running?.child.kill('SIGCONT')
    },
    /** SIGTERM (a clean broker shutdown) and waits for the exit. */
    async stop() {
      if (running && running.child.exitCode === null) await stopTally(running)
      running = undefined
    },
    async remove() {
      await this.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
