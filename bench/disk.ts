// What a run leaves on the worker's disk: the message store (prompt messages
// by content address), the trace, and the effect ledger, after a run of N
// turns, each on a stack of its own so no run shares another's files. Two
// lengths side by side show the growth: bytes per turn that stay flat from
// 100 to 1,000 turns are linear, not quadratic.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInput, RunResult } from '../common/contract.js';
import { startingAttributes } from '../workflows/visibility.js';
import { startBenchStack } from './stack.js';

export interface DiskFigures {
  turns: number;
  executions: number;
  /** Bytes of the files, and files, in each folder the worker wrote. */
  messages: { bytes: number; files: number };
  traces: { bytes: number; files: number };
  ledger: { bytes: number; files: number };
}

function folderSize(dir: string): { bytes: number; files: number } {
  if (!existsSync(dir)) return { bytes: 0, files: 0 };
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  return { bytes: files.reduce((n, f) => n + statSync(join(f.parentPath, f.name)).size, 0), files: files.length };
}

/** A `runaway` run of `turns` turns (a list_files call each, dedupe off, the default context window). */
export async function measureDisk(turns: number): Promise<DiskFigures> {
  const stack = await startBenchStack();
  const running = stack.worker.run();
  try {
    const input: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: turns, maxBudgetUsd: null } };
    const h = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: `disk-${turns}-${randomUUID().slice(0, 8)}`, args: [input], typedSearchAttributes: startingAttributes(input) });
    const r = (await h.result()) as RunResult;
    if (r.turns !== turns) throw new Error(`the disk run took ${r.turns} turns, expected ${turns}`);
    let executions = 0;
    for await (const w of stack.client.workflow.list({ query: `WorkflowId="${h.workflowId}"` })) if (w) executions += 1;
    return {
      turns,
      executions,
      messages: folderSize(join(stack.workspaceRoot, '.messages')),
      traces: folderSize(stack.traceDir),
      ledger: folderSize(join(stack.workspaceRoot, '.ledger')),
    };
  } finally {
    stack.worker.shutdown();
    await running;
    await stack.close();
  }
}
