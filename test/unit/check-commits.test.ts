import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { commitsAfter, messageProblems } from '../../scripts/check-commits.ts'

const SCRIPT = new URL('../../scripts/check-commits.ts', import.meta.url).pathname
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * The environment without git's own variables: run from a git command (a `rebase --exec`, a hook)
 * GIT_DIR and the like would point these throwaway repositories' commands at the real one.
 */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')))

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()

/** A repository with a base commit and the given commits after it; returns it and the base. */
function repository(messages: string[]): { dir: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-commits-'))
  dirs.push(dir)
  git(dir, 'init', '-q', '-b', 'main')
  const commit = (message: string, n: number) => {
    writeFileSync(join(dir, 'file'), String(n))
    git(dir, 'add', 'file')
    git(dir, 'commit', '-q', '--cleanup=verbatim', '-m', message)
  }
  commit('An old subject from before the rule, far longer than seventy-two characters in all', 0)
  const base = git(dir, 'rev-parse', 'HEAD')
  for (const [i, message] of messages.entries()) commit(message, i + 1)
  return { dir, base }
}

const run = (cwd: string, base: string) =>
  spawnSync(process.execPath, [SCRIPT, '--base', base], { cwd, env, encoding: 'utf8' })

describe('the commit message check', () => {
  it('takes a subject of up to 72 characters, alone or with a body below a blank line', () => {
    expect(messageProblems('Add a check\n')).toEqual([])
    expect(messageProblems(`${'x'.repeat(72)}\n\nWhy, at length.\n`)).toEqual([])
    // Characters, not bytes.
    expect(messageProblems(`${'→'.repeat(72)}\n`)).toEqual([])
  })

  it('names a long subject, an empty one, and a body with no blank line', () => {
    expect(messageProblems(`${'x'.repeat(73)}\n\nbody\n`)).toEqual([
      'the subject is 73 characters, more than 72',
    ])
    expect(messageProblems('\n')).toEqual(['the subject is empty'])
    expect(messageProblems('Subject\nbody straight after\n')).toEqual([
      'no blank line between the subject and the body',
    ])
  })

  it('fails on a bad commit after the base, whatever came before it', () => {
    const { dir, base } = repository(['Good subject\n\nBody.\n', `${'y'.repeat(80)}\n`])
    const result = run(dir, base)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`"${'y'.repeat(80)}": the subject is 80 characters, more than 72`)
    expect(result.stderr).toContain('1 of 2 commit(s)')
    const good = repository(['Good subject\n\nBody.\n'])
    expect(run(good.dir, good.base)).toMatchObject({ status: 0 })
  })

  it('deepens a shallow clone to reach the base, and says so when it cannot', () => {
    const { dir, base } = repository(['One\n', 'Two\n', 'Three\n'])
    const clone = mkdtempSync(join(tmpdir(), 'tally-test-commits-'))
    dirs.push(clone)
    git(clone, 'clone', '-q', '--depth', '1', `file://${dir}`, '.')
    expect(commitsAfter(base, clone).map((c) => c.message.trim())).toEqual(['One', 'Two', 'Three'])

    const cut = mkdtempSync(join(tmpdir(), 'tally-test-commits-'))
    dirs.push(cut)
    git(cut, 'clone', '-q', '--depth', '1', `file://${dir}`, '.')
    git(cut, 'remote', 'remove', 'origin')
    const result = run(cut, base)
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(
      /this clone is shallow and lacks the base commit \w{7}.*; clone without --depth/,
    )
  })

  it('refuses a base missing from a full clone', () => {
    const { dir } = repository(['One\n'])
    const result = run(dir, '0000000000000000000000000000000000000000')
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('the base commit 0000000 is not in this clone')
  })
})
