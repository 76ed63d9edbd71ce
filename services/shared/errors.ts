/** The one error type the API answers with. `message` is shown to the caller, except for a 500. */
export class AppError extends Error {
  readonly status: number
  readonly code: string
  /** Seconds after which a retry may succeed (a 429 or 503): sent as Retry-After. */
  readonly retryAfterSeconds: number | undefined

  constructor(status: number, code: string, message: string, options: { retryAfterSeconds?: number } = {}) {
    super(message)
    this.status = status
    this.code = code
    this.retryAfterSeconds = options.retryAfterSeconds
  }
}

export const badRequest = (message: string) => new AppError(400, 'bad_request', message)
export const notFound = (message: string) => new AppError(404, 'not_found', message)
export const conflict = (message: string) => new AppError(409, 'conflict', message)
