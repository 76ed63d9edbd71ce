import { defineConfig } from 'vitest/config'

// The fault suite (npm run test:faults): Tally as separate processes on a Kafka broker of each
// file's own, which the tests kill, freeze and start again. One file at a time: the faults are
// long, and timings are only meaningful on a machine not busy with another file.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.fault.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
})
