// Where `trace` (and `follow --trace-file`) look for a run's trace: what a
// worker wrote by default, wherever the CLI runs. TRACE_DIR, when set, wins
// and is the only place looked at. Otherwise, in order:
//   1. `$AGENT_WORKSPACE/.traces`: AgentPlugin's default (`<workspace>/.traces`)
//      when its workspace comes from AGENT_WORKSPACE, as in a team's worker;
//   2. `<package>/.data/traces`: the packaged worker's default (`npm run
//      worker` in the harness's own checkout);
//   3. `./.traces`: AgentPlugin's default for a worker whose workspace is the
//      directory the CLI runs in.
// The first that holds a trace of the run is read; none: the message names
// every place looked at, and TRACE_DIR (the worker's `traceDir`).
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../node/project-root.js';
import { traceChains } from '../node/trace-format.js';

/** The directories looked in, in order, and whether TRACE_DIR named the one. */
export function traceDirCandidates(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): { dirs: string[]; fromEnv: boolean } {
  if (env.TRACE_DIR) return { dirs: [resolve(env.TRACE_DIR)], fromEnv: true };
  const dirs = [
    ...(env.AGENT_WORKSPACE ? [resolve(env.AGENT_WORKSPACE, '.traces')] : []),
    resolve(PROJECT_ROOT, '.data', 'traces'),
    resolve(cwd, '.traces'),
  ];
  return { dirs: [...new Set(dirs)], fromEnv: false };
}

/** The directory holding the run's trace (the first candidate that does), or the first candidate: a run about to write its first line. */
export function traceDirOf(workflowId: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const { dirs } = traceDirCandidates(env, cwd);
  return dirs.find((d) => traceChains(d, workflowId).length > 0) ?? dirs[0];
}

/** "under DIR (TRACE_DIR)" or "under A, B or C (set TRACE_DIR to the worker's traceDir)", for a message saying no trace was found. */
export function whereLooked(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const { dirs, fromEnv } = traceDirCandidates(env, cwd);
  if (fromEnv) return `under ${dirs[0]} (TRACE_DIR)`;
  return `under ${dirs.slice(0, -1).join(', ')} or ${dirs.at(-1) ?? ''} (set TRACE_DIR to the worker's traceDir)`;
}
