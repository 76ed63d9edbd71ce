import { defineConfig } from 'vitest/config'

/**
 * The unit tier (npm run test:unit): tests of the pure parts, with no engine and no global set-up
 * that starts one, in well under 10 s. New ones go in test/unit/; the engine-free tests that live
 * beside their integration suites are listed here. `npm test` runs them too (vitest.config.ts
 * includes every test file).
 */
export default defineConfig({
  test: {
    include: [
      'test/unit/**/*.test.ts',
      'test/architecture/dependency-rule.test.ts',
      'test/foundation/config.test.ts',
      'test/foundation/config-bounds.test.ts',
      'test/foundation/embedded-platform.test.ts',
      'test/foundation/event-codec.test.ts',
      'test/metrics/buckets.test.ts',
      'test/pipeline/coalesced-writes.test.ts',
      'test/pipeline/usage-and-cost.test.ts',
      'test/requests/recent-ids.test.ts',
      'test/sql/json-envelope.test.ts',
      'test/webhooks/rules.test.ts',
    ],
    pool: 'forks',
    // Pure tests share nothing worth a fresh process each: reusing the workers halves the tier's time.
    isolate: false,
    testTimeout: 5_000,
  },
})
