/**
 * What other domain folders may use of keys/ (the architecture check admits no other file): for the
 * instance-admin API (admin/), the repository that creates an organization with its first key, and
 * the NOTIFY channel that makes every process forget a deleted key.
 */
export { API_KEYS_CHANNEL, type ApiKeyRepo } from './repo.ts'
