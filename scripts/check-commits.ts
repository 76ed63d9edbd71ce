/**
 * `npm run check:commits` (run by CI): every commit after BASE has a subject of at most 72
 * characters, with the details in a body below a blank line. BASE is main as it stood when the
 * rule came in (issue 31); older commits are left as they are, since published history is not
 * rewritten. Checks the commits reachable from HEAD but not from BASE, merges included.
 *
 * It needs the history back to BASE: in a shallow clone (`git clone --depth …`) it deepens the
 * clone from its remote once, and if BASE is still missing it says so and exits 2, never passing
 * by checking fewer commits. `--base <commit>` checks after another commit (for tests).
 */
import { execFileSync } from 'node:child_process'

/** main's head when the rule came in: 57bd20c, "One helper gives the cursor after a full page, …". */
const BASE = '57bd20c35b0597fa52df2bf11b6775329acc20cf'
export const MAX_SUBJECT = 72

export interface Commit {
  hash: string
  /** The whole message, as git stores it. */
  message: string
}

/** What is wrong with one commit message; empty when nothing is. */
export function messageProblems(message: string): string[] {
  const [subject = '', second] = message.replace(/\n+$/, '').split('\n')
  const problems: string[] = []
  const length = [...subject].length
  if (subject.trim() === '') problems.push('the subject is empty')
  else if (length > MAX_SUBJECT)
    problems.push(`the subject is ${length} characters, more than ${MAX_SUBJECT}`)
  if (second !== undefined && second.trim() !== '')
    problems.push('no blank line between the subject and the body')
  return problems
}

/**
 * The repository is the one at `cwd`: git's own variables (GIT_DIR and the like, set when this
 * runs under a git command such as `rebase --exec`) would point it elsewhere.
 */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')))

const git = (args: string[], cwd: string) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

function hasCommit(rev: string, cwd: string): boolean {
  try {
    git(['cat-file', '-e', `${rev}^{commit}`], cwd)
    return true
  } catch {
    return false
  }
}

/** The commits after `base` on HEAD, oldest first; throws a message saying why it cannot tell. */
export function commitsAfter(base: string, cwd: string): Commit[] {
  if (!hasCommit(base, cwd)) {
    const shallow = git(['rev-parse', '--is-shallow-repository'], cwd).trim() === 'true'
    let failure = ''
    if (shallow) {
      try {
        git(['fetch', '--quiet', '--unshallow'], cwd)
      } catch (err) {
        failure = `, and deepening it failed (${(err as Error).message.split('\n')[0]})`
      }
    }
    if (!hasCommit(base, cwd)) {
      throw new Error(
        shallow
          ? `this clone is shallow and lacks the base commit ${base.slice(0, 7)}${failure}; ` +
              'clone without --depth, or run `git fetch --unshallow`'
          : `the base commit ${base.slice(0, 7)} is not in this clone`,
      )
    }
  }
  try {
    git(['merge-base', '--is-ancestor', base, 'HEAD'], cwd)
  } catch {
    throw new Error(`HEAD does not descend from the base commit ${base.slice(0, 7)}`)
  }
  const log = git(['log', '--reverse', '--format=%H%x00%B%x1e', `${base}..HEAD`], cwd)
  return log
    .split('\x1e')
    .map((entry) => entry.replace(/^\n/, ''))
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [hash = '', message = ''] = entry.split('\x00')
      return { hash, message }
    })
}

if (import.meta.main) {
  const at = process.argv.indexOf('--base')
  const base = at >= 0 ? (process.argv[at + 1] ?? '') : BASE
  let commits: Commit[]
  try {
    commits = commitsAfter(base, process.cwd())
  } catch (err) {
    console.error(`check-commits: ${(err as Error).message}`)
    process.exit(2)
  }
  let bad = 0
  for (const { hash, message } of commits) {
    const problems = messageProblems(message)
    if (problems.length === 0) continue
    bad += 1
    const subject = message.split('\n')[0]
    console.error(`check-commits: ${hash.slice(0, 10)} "${subject}": ${problems.join('; ')}`)
  }
  if (bad > 0) {
    console.error(
      `check-commits: ${bad} of ${commits.length} commit(s) after ${base.slice(0, 7)} break the rule: ` +
        `a subject of at most ${MAX_SUBJECT} characters, details in the body (docs/development.md)`,
    )
    process.exit(1)
  }
  console.log(
    `check-commits: ${commits.length} commit(s) after ${base.slice(0, 7)}, every subject ≤ ${MAX_SUBJECT}`,
  )
}
