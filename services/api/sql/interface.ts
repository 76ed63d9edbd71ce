/**
 * What other domain folders may use of sql/ (the architecture check admits no other file): the
 * guard of callers' SQL, for the analyst door (analyst/).
 */
export { checkAnswerText, createSqlGuard, SqlRefused } from './guard.ts'
