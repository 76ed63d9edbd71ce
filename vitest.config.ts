import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'services/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Every test file gets a process of its own: its ClickHouse database and data directory are named by its pid.
    pool: 'forks',
    isolate: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
