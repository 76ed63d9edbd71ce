/** The one error type the API answers with. `message` is shown to the caller, except for a 500. */
export class AppError extends Error {
  readonly status: number
  readonly code: string

  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

export const badRequest = (message: string) => new AppError(400, 'bad_request', message)
export const notFound = (message: string) => new AppError(404, 'not_found', message)
export const conflict = (message: string) => new AppError(409, 'conflict', message)
