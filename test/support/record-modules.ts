// Preloaded with `node --import` into a process under test: appends the URL of every module the
// process resolves to the file named by TALLY_TEST_MODULE_LOG, so a test can see what it loaded.
import { appendFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

const log = process.env.TALLY_TEST_MODULE_LOG
if (log) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context)
      appendFileSync(log, `${resolved.url}\n`)
      return resolved
    },
  })
}
