// `npm run bench:long`: the long unattended runs, on a dev server with
// Temporal's default limits (continue-as-new suggested at 4 MiB / 4,096 events,
// warning at 10 MiB / 10,240 events).
//   runaway, 1,000 turns             transcript grows ~100 bytes a turn
//   bulky, 200 turns of ~4 KB pages  transcript grows ~4 KB a turn
// For each: executions, the largest history (bytes, events), wall time, and
// whether total cost equals the sum of the turns.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '../activities/trace-file';
import { summaryLine } from '../client/render';
import type { AgentInput, RunResult } from '../workflows/types';
import { startBenchStack } from './stack';

const WARN_BYTES = 10 * 1024 * 1024;
const stack = await startBenchStack();

// Twenty ~4 KB pages of varied words, so compression cannot make them vanish.
function page(i: number): string {
  let x = 2463534242 + i * 7919;
  const words = ['timeout', 'worker', 'batch', 'requeued', 'latency', 'shard', 'retry', 'commit', 'lease', 'heartbeat', 'quorum', 'replica'];
  const out: string[] = [];
  while (out.join(' ').length < 4096) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push(`${words[Math.abs(x) % words.length]}-${Math.abs(x) % 9973}`);
  }
  return out.join(' ');
}
const ws = join(stack.workspaceRoot, 'bulky');
mkdirSync(ws, { recursive: true });
for (let i = 0; i < 20; i++) writeFileSync(join(ws, `page${i}.txt`), page(i));
for (const f of ['errors.log', 'access.log', 'notes.txt']) writeFileSync(join(ws, f), '');

async function longRun(label: string, input: AgentInput): Promise<void> {
  const id = `long-${label}`;
  const t0 = performance.now();
  const handle = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [input] });
  const r = (await handle.result()) as RunResult;
  const ms = Math.round(performance.now() - t0);
  let executions = 0;
  let maxBytes = 0;
  let maxEvents = 0;
  for await (const w of stack.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    executions += 1;
    maxBytes = Math.max(maxBytes, w.historySize ?? 0);
    maxEvents = Math.max(maxEvents, w.historyLength);
  }
  const turns = readTrace(stack.traceDir, id).filter((l) => l.type === 'turn');
  const sum = turns.reduce((a, l) => a + Number(l.turnCostUsd), 0);
  console.log(`${label}: ${summaryLine(r, ms)}`);
  console.log(
    `  executions=${executions} largest history=${maxBytes} bytes / ${maxEvents} events (under 10 MiB: ${maxBytes < WARN_BYTES}) ` +
      `cost=sum of ${turns.length} turns: ${Math.abs(sum - r.costUsd) < 1e-9}`,
  );
}

await stack.worker.runUntil(async () => {
  await longRun('runaway-1000', { task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: 1000, maxBudgetUsd: null } });
  await longRun('bulky-200', { task: 'Read every page.', model: 'bulky', workspace: 'bulky', limits: { maxTurns: 200, maxBudgetUsd: null } });
});
await stack.close();
