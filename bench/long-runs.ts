// `npm run bench:long`: the long unattended runs, on a dev server with
// Temporal's default limits (continue-as-new suggested at 4 MiB / 4,096 events,
// warning at 10 MiB / 10,240 events).
//   runaway-1000   1,000 turns of list_files, no context window
//   bulky-1000     1,000 turns of ~4 KB pages, dedupe off (every turn runs the
//                  tool), a 16k-token context window
// For each: executions, the largest execution's history, history bytes per
// turn (mean and median over turns 100-199 and 900-999, and their ratio),
// prompt tokens and cost per turn at both points, and whether total cost is
// the sum of the turns. Writes reports/long-runs.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { readTrace } from '../node/trace-format.js';
import { bytesPerTurn, chainEvents } from '../client/run-history.js';
import { summaryLine } from '../client/render.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { startBenchStack } from './stack.js';

const WARN_BYTES = 10 * 1024 * 1024;
const TURNS = Number(process.env.LONG_TURNS ?? 1000);
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

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const rows: string[] = [];

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
  const perTurn = bytesPerTurn(await chainEvents(stack.client, id));
  const turns = readTrace(stack.traceDir, id).filter((l) => l.type === 'turn');
  const sum = turns.reduce((a, l) => a + Number(l.turnCostUsd), 0);
  // Two windows of 100 turns: after the context window has filled, and at the end.
  const early = perTurn.slice(100, 200);
  const late = perTurn.slice(-100);
  const at = (k: number) => turns[Math.min(k, turns.length - 1)];
  console.log(`${label}: ${summaryLine(r, ms)}`);
  const line = [
    label,
    `${r.turns}`,
    `${executions}`,
    `${(maxBytes / 1024 / 1024).toFixed(2)} MiB / ${maxEvents}`,
    `${maxBytes < WARN_BYTES ? 'yes' : 'NO'}`,
    `${Math.round(mean(early))} / ${median(early)}`,
    `${Math.round(mean(late))} / ${median(late)}`,
    `${(mean(late) / mean(early)).toFixed(2)}`,
    `${at(100)?.prompt_tokens} → ${at(TURNS - 1)?.prompt_tokens}`,
    `$${Number(at(100)?.turnCostUsd).toFixed(6)} → $${Number(at(TURNS - 1)?.turnCostUsd).toFixed(6)}`,
    `${Math.abs(sum - r.costUsd) < 1e-9 ? 'yes' : 'NO'}`,
    `${(ms / 1000).toFixed(1)} s`,
  ];
  console.log(`  ${line.join(' | ')}`);
  rows.push(`| ${line.join(' | ')} |`);
}

await stack.worker.runUntil(async () => {
  await longRun(`runaway-${TURNS}`, { task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: TURNS, maxBudgetUsd: null } });
  await longRun(`bulky-${TURNS}`, {
    task: 'Read every page.',
    model: 'bulky',
    workspace: 'bulky',
    dedupe: 'off',
    limits: { maxTurns: TURNS, maxBudgetUsd: null },
    context: { windowTokens: 16_000, strategy: 'elide' },
  });
});
await stack.close();

const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
mkdirSync(join(PROJECT_ROOT, 'reports'), { recursive: true });
writeFileSync(
  join(PROJECT_ROOT, 'reports', 'long-runs.md'),
  `# Long runs (\`npm run bench:long\`)

Commit ${commit}, ${new Date().toISOString().slice(0, 10)}, 2 cores, dev server with Temporal's default limits
(continue-as-new suggested at 4 MiB / 4,096 events). Bytes per turn: the encoded history events from one model
call's scheduling to the next, mean / median over turns 100-199 and the last 100.

| run | turns | executions | largest execution (bytes / events) | under 10 MiB | bytes/turn 100-199 | bytes/turn last 100 | ratio | prompt tokens turn 100 → last | turn cost 100 → last | cost = sum of turns | wall |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`,
);
