import { describe, expect, it } from 'vitest'
import { createRecentIds } from '../../services/api/requests/recent-ids.ts'

describe('the ids an API process remembers', () => {
  const at = (iso: string) => new Date(iso)

  it('answers the created_at an id was published with, per organization', () => {
    const recent = createRecentIds(10)
    recent.remember('org-a', [{ request_id: 'r1', created_at: at('2026-11-03T08:00:00Z') }])
    expect(recent.get('org-a', 'r1')).toEqual(at('2026-11-03T08:00:00Z'))
    expect(recent.get('org-b', 'r1')).toBeUndefined()
    expect(recent.get('org-a', 'r2')).toBeUndefined()
  })

  it('keeps at most its capacity, forgetting the least recently published first', () => {
    const recent = createRecentIds(2)
    const t = at('2026-11-03T08:00:00Z')
    recent.remember('o', [
      { request_id: 'a', created_at: t },
      { request_id: 'b', created_at: t },
    ])
    // Published again: the most recent now.
    recent.remember('o', [{ request_id: 'a', created_at: t }])
    recent.remember('o', [{ request_id: 'c', created_at: t }])
    expect(recent.size()).toBe(2)
    expect(recent.get('o', 'b')).toBeUndefined()
    expect(recent.get('o', 'a')).toEqual(t)
    expect(recent.get('o', 'c')).toEqual(t)
  })
})
