import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'services/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // chdb is one engine per process: every test file gets a process of its own.
    pool: 'forks',
    isolate: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
