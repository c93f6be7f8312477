// Starts a run and follows it: tails the run's trace file while waiting for
// the result. The trace is written by the worker under TRACE_DIR; a CLI on
// another machine still gets the result and the summary line.
import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import { resolveTraceFile, type TraceLine } from '../common/trace-format.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { AgentClient } from './agent-client.js';
import type { AgentRunHandle } from './run-handle.js';
import { renderEvent, summaryLine } from './render.js';

export { summaryOf } from './run-summary.js';

export interface FollowOptions {
  traceDir: string;
  out?: (line: string) => void;
  /** Rewrite tool progress in place (a terminal) rather than one line each. */
  live?: boolean;
}

/** Follows a started run to its end: its trace lines as they come, then the answer or error and the summary line. */
export async function followRun(handle: AgentRunHandle, opts: FollowOptions & { started: number }): Promise<RunResult> {
  const result = await follow(handle.workflowId, () => handle.result(), { ...opts, chainId: handle.runId });
  const out = opts.out ?? console.log;
  if (result.output) out(`answer: ${result.output}`);
  if (result.error) out(`error: ${result.error}`);
  out(summaryLine(result, Date.now() - opts.started));
  return result;
}

/** Starts a run and follows it (the experiments' demos). */
export async function runAndFollow(client: Client, input: AgentInput, opts: FollowOptions & { taskQueue: string; workflowId: string }): Promise<RunResult> {
  const started = Date.now();
  const handle = await new AgentClient({ client, taskQueue: opts.taskQueue }).start(input, { workflowId: opts.workflowId });
  return followRun(handle, { ...opts, started });
}

/** Prints the run's trace lines as they appear until `wait` resolves. */
export async function follow<T>(
  workflowId: string,
  wait: () => Promise<T>,
  opts: FollowOptions & { chainId?: string },
): Promise<T> {
  const out = opts.out ?? console.log;
  // A known chain (the run this process started) or the latest run of the id.
  let file = resolveTraceFile(opts.traceDir, workflowId, opts.chainId);
  let offset = 0;
  let progressShown = false;
  const drain = () => {
    if (!existsSync(file)) {
      if (opts.chainId === undefined) file = resolveTraceFile(opts.traceDir, workflowId);
      return;
    }
    const text = readFileSync(file, 'utf8');
    const complete = text.lastIndexOf('\n') + 1;
    for (const raw of text.slice(offset, complete).split('\n')) {
      if (!raw.trim()) continue;
      const line = JSON.parse(raw) as TraceLine;
      const rendered = renderEvent(line, workflowId);
      if (rendered === null) continue;
      if (opts.live && line.type === 'tool_progress') {
        process.stdout.write(`\r\x1b[2K${rendered}`);
        progressShown = true;
        continue;
      }
      if (progressShown) process.stdout.write('\n');
      progressShown = false;
      out(rendered);
    }
    offset = complete;
  };
  const timer = setInterval(drain, 100);
  try {
    const result = await wait();
    // The last lines may land just after the result: give the writer a moment.
    await new Promise((r) => setTimeout(r, 150));
    drain();
    return result;
  } finally {
    clearInterval(timer);
    if (progressShown) process.stdout.write('\n');
  }
}
