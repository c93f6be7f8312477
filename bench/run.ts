// `npm run bench`: the figures the closing notes report, measured on a real
// dev server, worker and scripted provider (never inside timed tests).
//   plan ×10           wall time per run (median, p90) and the run's figures
//   runaway cap 20     turns, tokens, cost, wall time
//   slow + Stop @1.2s  time from the cancel signal to the result and to the last progress line
import { readTrace } from '../node/trace-format.js';
import { summaryLine } from '../client/render.js';
import { cancelSignal } from '../common/run-messages.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { startBenchStack } from './stack.js';

const { client, worker, traceDir, close } = await startBenchStack();
let n = 0;

async function timed(input: AgentInput): Promise<{ r: RunResult; ms: number; id: string }> {
  const id = `bench-${input.model}-${++n}`;
  const t0 = performance.now();
  const r = (await client.workflow.execute('agentRun', { taskQueue: 'bench', workflowId: id, args: [input] })) as RunResult;
  return { r, ms: Math.round(performance.now() - t0), id };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

await worker.runUntil(async () => {
  await timed({ task: 'warm-up', model: 'plan' });
  const plans: number[] = [];
  let last: RunResult | null = null;
  for (let i = 0; i < 10; i++) {
    const { r, ms } = await timed({ task: 'Which file mentions a timeout?', model: 'plan', limits: { maxTurns: 20 } });
    plans.push(ms);
    last = r;
  }
  console.log(`plan, cap 20     ${summaryLine(last!, pct(plans, 0.5))}  (median of 10; p90 ${pct(plans, 0.9)} ms)`);
  console.log(`                 per-turn prompt tokens: ${last!.promptTokensPerTurn.join(', ')}`);

  for (const dedupe of ['readOnly', 'off'] as const) {
    const { r, ms } = await timed({ task: 'Keep listing files.', model: 'runaway', dedupe, limits: { maxTurns: 20, maxBudgetUsd: null } });
    console.log(`runaway cap 20 (dedupe=${dedupe})  ${summaryLine(r, ms)}`);
  }

  const id = `bench-slow-${++n}`;
  const handle = await client.workflow.start('agentRun', { taskQueue: 'bench', workflowId: id, args: [{ task: 'Scan.', model: 'slow' }] });
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 1200));
  const stopAt = Date.now();
  await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
  const r = (await handle.result()) as RunResult;
  const endedAt = Date.now();
  await new Promise((res) => setTimeout(res, 1000));
  const progress = readTrace(traceDir, id).filter((l) => l.type === 'tool_progress');
  const lastProgress = Date.parse(progress.at(-1)?.ts ?? new Date(started).toISOString());
  console.log(
    `slow, Stop at 1.2 s  status=${r.status} reason="${r.interruption?.type === 'cancelled' ? r.interruption.reason : ''}" ` +
      `stop→result=${endedAt - stopAt} ms  run wall=${endedAt - started} ms  progress lines=${progress.length}  ` +
      `last progress ${lastProgress - stopAt} ms after the Stop`,
  );
  const full = await timed({ task: 'Scan.', model: 'slow' });
  console.log(`slow, no cancel  ${summaryLine(full.r, full.ms)}`);
});
await close();
