// Follows a run to its end: its live stream (topic `events`, read through
// Temporal, so from any machine that reaches it), or, when asked, its trace
// file, which the worker writes under TRACE_DIR on its own disk.
import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import { resolveTraceFile, type TraceLine } from '../node/trace-format.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { AgentClient } from './agent-client.js';
import type { AgentRunHandle } from './run-handle.js';
import { renderEvent, summaryLine } from './render.js';
import { NoStreamError, StreamOffsetError } from './run-events.js';
import { isGap, isTokenEnd, isTokenText } from '../common/stream-items.js';

export { summaryOf } from './run-summary.js';

export interface FollowOptions {
  traceDir: string;
  out?: (line: string) => void;
  /** Rewrite tool progress in place and show the model's text as it arrives (a terminal), rather than one line each. */
  live?: boolean;
  /** Read the trace file under traceDir instead of the live stream. */
  traceFile?: boolean;
  /** The stream offset to start from (default 0). */
  fromOffset?: number;
  /** Print the model's text batches as lines (`  ▸ …`), also when not a terminal. */
  tokens?: boolean;
}

/** Follows a started run to its end: its events as they come, then the answer or error and the summary line. */
export async function followRun(handle: AgentRunHandle, opts: FollowOptions & { started: number }): Promise<RunResult> {
  const result = await followEvents(handle, opts);
  const out = opts.out ?? console.log;
  if (result.output) out(`answer: ${result.output}`);
  // A run with an outputSchema: the answer's value, as one line of JSON a script can take.
  if (result.structuredOutput !== undefined) out(`structuredOutput: ${JSON.stringify(result.structuredOutput)}`);
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

/**
 * Prints the run's live stream as it comes, then waits for its result. A run
 * started by a worker older than the stream is followed through its trace
 * file instead; a stream that cannot be read is one line, and the result still comes.
 */
export async function followEvents(handle: AgentRunHandle, opts: FollowOptions): Promise<RunResult> {
  const out = opts.out ?? console.log;
  const { workflowId } = handle;
  if (opts.traceFile) return follow(workflowId, () => handle.result(), { ...opts, chainId: handle.runId });
  let inline = false;
  const endInline = () => {
    if (inline) process.stdout.write('\n');
    inline = false;
  };
  try {
    for await (const item of handle.events(opts.fromOffset ?? 0)) {
      if (isTokenText(item)) {
        if (opts.live) {
          if (!inline) process.stdout.write('  ▸ ');
          process.stdout.write(item.text.replace(/\n/g, ' '));
          inline = true;
        } else if (opts.tokens) out(`  ▸ ${item.text}`);
        continue;
      }
      if (isTokenEnd(item)) {
        endInline();
        if ((opts.live || opts.tokens) && item.outcome === 'failed') out(`  (attempt ${item.attempt} of turn ${item.turn} failed: its text is dropped)`);
        continue;
      }
      if (isGap(item)) {
        endInline();
        out(`  … items ${item.from}–${item.to} cannot be shown: ${item.reason}`);
        continue;
      }
      const rendered = renderEvent({ ts: '', runId: workflowId, ...item }, workflowId);
      if (rendered === null) continue;
      if (opts.live && item.type === 'tool_progress') {
        process.stdout.write(`\r\x1b[2K${rendered}`);
        inline = true;
        continue;
      }
      endInline();
      out(rendered);
    }
  } catch (err) {
    endInline();
    if (err instanceof StreamOffsetError) throw err;
    if (err instanceof NoStreamError) return follow(workflowId, () => handle.result(), { ...opts, chainId: handle.runId });
    console.error(`agent-harness: cannot read the live stream of ${workflowId}: ${err instanceof Error ? err.message : String(err)}; waiting for its result`);
  }
  endInline();
  return handle.result();
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
