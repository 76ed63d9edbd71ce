import { type Logger, pino } from 'pino'
import type { Config } from './config.ts'

export type { Logger }

export function createLogger(config: Pick<Config, 'TALLY_LOG_LEVEL'>, name: string): Logger {
  return pino({
    name,
    level: config.TALLY_LOG_LEVEL,
    redact: { paths: ['req.headers.authorization', 'hmac_key', '*.hmac_key'], censor: '[redacted]' },
  })
}
