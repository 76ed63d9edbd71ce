import { describe, expect, it } from 'vitest'
import { embeddedClickHouseUnsupported } from '../../services/shared/clickhouse-server/server.ts'

describe('the embedded ClickHouse server on other platforms', () => {
  it('runs on Linux x64 with glibc', () => {
    expect(embeddedClickHouseUnsupported({ platform: 'linux', arch: 'x64', glibc: '2.36' })).toBeUndefined()
  })

  it.each([
    [{ platform: 'darwin', arch: 'arm64', glibc: undefined }, 'darwin arm64'],
    [{ platform: 'win32', arch: 'x64', glibc: undefined }, 'win32 x64'],
    [{ platform: 'linux', arch: 'arm64', glibc: '2.36' }, 'linux arm64'],
    [{ platform: 'linux', arch: 'x64', glibc: undefined }, 'linux x64 without glibc'],
  ])('refuses %o with an error that names CLICKHOUSE_URL', (platform, named) => {
    const message = embeddedClickHouseUnsupported(platform)
    expect(message).toContain('Linux x64 with glibc only')
    expect(message).toContain(named)
    expect(message).toContain('Set CLICKHOUSE_URL')
  })
})
