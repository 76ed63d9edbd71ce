/**
 * `npm run docs:config`: writes docs/configuration.md from the zod configuration schema
 * (services/shared/config.ts) and the meanings of services/shared/config-reference.ts.
 * test/docs/docs.test.ts fails when the file differs from what this writes.
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { configurationDoc } from '../services/shared/config-reference.ts'

const file = resolve(import.meta.dirname, '../docs/configuration.md')
writeFileSync(file, configurationDoc())
console.log(`wrote ${file}`)
