import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { freePort } from '../../services/shared/net.ts'

const range = (() => {
  try {
    return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
  } catch {
    return undefined
  }
})()

describe('freePort', () => {
  it('hands out ports a server can bind, never the same one twice', async () => {
    const ports = await Promise.all(Array.from({ length: 30 }, () => freePort()))
    expect(new Set(ports).size).toBe(30)
    for (const port of ports.slice(0, 5)) {
      const server = createServer()
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => resolve())
      })
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it.skipIf(!range || (range[0] as number) < 11_000)(
    "picks below the kernel's ephemeral range, which outgoing connections draw from",
    async () => {
      for (let i = 0; i < 20; i += 1) expect(await freePort()).toBeLessThan(range?.[0] as number)
    },
  )
})
