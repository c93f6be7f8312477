// Starts a run and follows it: tails the run's trace file while waiting for
// the result. The trace is written by the worker under TRACE_DIR; a CLI on
// another machine still gets the result and the summary line.
import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import { resolveTraceFile, type TraceLine } from '../common/trace-format.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { renderEvent, summaryLine } from './render.js';
import { startingAttributes } from '../workflows/visibility.js';

export interface FollowOptions {
  taskQueue: string;
  traceDir: string;
  workflowId: string;
  out?: (line: string) => void;
  /** Rewrite tool progress in place (a terminal) rather than one line each. */
  live?: boolean;
  /** Called once the run is started, before anything waits on a worker (the CLI's start line and its worker check). */
  onStart?: () => Promise<void>;
}

/** One line for the Web UI's run list: the task, or what the run resumes. */
export function summaryOf(input: AgentInput): string {
  const text = input.task ?? (input.resumeFrom ? `resume ${input.resumeFrom}` : input.forkFrom?.run ? `fork ${input.forkFrom.run} at turn ${input.forkFrom.atTurn}` : 'agent run');
  return text.replace(/\s+/g, ' ').slice(0, 200);
}

export async function runAndFollow(client: Client, input: AgentInput, opts: FollowOptions): Promise<RunResult> {
  const started = Date.now();
  const handle = await client.workflow.start('agentRun', {
    taskQueue: opts.taskQueue,
    workflowId: opts.workflowId,
    args: [input],
    // The Web UI shows the task as the run's summary.
    staticSummary: summaryOf(input),
    // Set at the start, they cost no upsert (see startingAttributes).
    typedSearchAttributes: startingAttributes(input),
  });
  await opts.onStart?.();
  const result = await follow(handle.workflowId, () => handle.result() as Promise<RunResult>, { ...opts, chainId: handle.firstExecutionRunId });
  const out = opts.out ?? console.log;
  if (result.output) out(`answer: ${result.output}`);
  if (result.error) out(`error: ${result.error}`);
  out(summaryLine(result, Date.now() - started));
  return result;
}

/** Prints the run's trace lines as they appear until `wait` resolves. */
export async function follow<T>(
  workflowId: string,
  wait: () => Promise<T>,
  opts: Omit<FollowOptions, 'workflowId' | 'taskQueue'> & { chainId?: string },
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
