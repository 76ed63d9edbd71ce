import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node'

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, for CI logs, and makes
 * sure a run that failed outside any test (the global setup throwing, say) or ran no test at all
 * exits non-zero: vitest reports such a run but can still exit 0.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason: TestRunEndReason,
  ): void {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') counts.passed++
        else if (state === 'failed') counts.failed++
        else counts.skipped++
      }
      if (module.state() === 'failed' && module.children.size === 0) counts.failed++
    }
    console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
    const ranNothing = counts.passed + counts.failed === 0
    if (reason !== 'passed' || unhandledErrors.length > 0 || counts.failed > 0 || ranNothing) {
      if (ranNothing || unhandledErrors.length > 0)
        console.log('tests: the run failed before or outside the tests')
      process.exitCode = 1
      process.once('exit', () => {
        process.exitCode = 1
      })
    }
  }
}
