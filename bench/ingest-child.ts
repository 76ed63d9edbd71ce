// The child process of bench:ingest and bench:cluster (started by startChild): Tally in the role(s)
// named by its argument, answering the parent's commands over IPC.
import { type Role, serve } from './ingest-pipeline.ts'

await serve((process.argv[2] ?? 'all') as Role)
