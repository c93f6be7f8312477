// `npm run experiments`: the chapter's measurements from real durable runs,
// ours beside the chapter's, each with the qualitative result it must show.
// Prints the tables and writes reports/experiments.md. Exits non-zero when a
// check fails. `--fast` runs the quick subset; `--only NAME` one table (reports/experiments-NAME.md). `--real` runs the six tasks
// against the model at LLM_BASE_URL (with LLM_MODEL, LLM_API_KEY) instead.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { readTrace } from '../node/trace-format.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { startLocalModel } from '../dev/model/local-model.js';
import { approveSignal, cancelSignal, rejectSignal } from '../common/run-messages.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { startBenchStack } from '../bench/stack.js';
import { waitForApproval } from '../test/helpers/wait-for-approval.js';
import { startWorkerProcess } from '../test/helpers/spawn-worker.js';
import { Experiments, type ExperimentSettings } from '../test/helpers/experiments.js';
import { addFault } from '../dev/provider/control.js';
import { CHAPTER } from './chapter.js';
import { softVsHardBudget } from './budget.js';

interface Table {
  title: string;
  header: string[];
  rows: (string | number)[][];
  checks: { what: string; ok: boolean }[];
  /** What the run shows, in words (the real model's mistakes). */
  notes?: string[];
}

const fast = process.argv.includes('--fast');
const real = process.argv.includes('--real');
// --real: LLM_BASE_URL (with LLM_MODEL, LLM_API_KEY) names any OpenAI-compatible
// server; without it, the local model (llama-server over SmolLM2-135M) is started.
const localModel = real && !process.env.LLM_BASE_URL ? await startLocalModel({ port: await findFreePort() }) : null;
const realLlm = localModel
  ? { baseUrl: localModel.url, model: localModel.model }
  : { baseUrl: process.env.LLM_BASE_URL ?? '', apiKey: process.env.LLM_API_KEY || undefined, model: process.env.LLM_MODEL || undefined };
// The chapter's failure modes are experiment settings, not a run's input: set per run on this stack's worker.
const experimentRuns = new Experiments();
const stack = await startBenchStack({ ...(real ? { llm: realLlm } : {}), worker: { seams: experimentRuns.seams() } });
const usd = (n: number) => `$${n.toFixed(6)}`;
const ratio = (ours: number, theirs: number) => (theirs ? `${(ours / theirs).toFixed(2)}×` : '—');
let n = 0;

async function run(input: AgentInput, drive?: (h: WorkflowHandle) => Promise<void>, experiment?: ExperimentSettings): Promise<{ r: RunResult; ms: number; id: string }> {
  const id = `exp-${input.model}-${++n}`;
  if (experiment) experimentRuns.set(id, experiment);
  const t0 = performance.now();
  const h = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [input] });
  await drive?.(h);
  const r = (await h.result()) as RunResult;
  return { r, ms: Math.round(performance.now() - t0), id };
}

const task = 'Which file mentions a timeout?';
const tables: Table[] = [];

async function plan(): Promise<Table> {
  await run({ task, model: 'plan' }); // warm-up
  const { r, ms } = await run({ task, model: 'plan', limits: { maxTurns: 20 } });
  const c = CHAPTER.plan;
  return {
    title: 'plan, cap 20',
    header: ['figure', 'chapter', 'ours', 'ratio'],
    rows: [
      ['turns', c.turns, r.turns, ratio(r.turns, c.turns)],
      ['tool runs', c.tools, r.toolRuns, ratio(r.toolRuns, c.tools)],
      ['tokens in', c.in, r.usage.promptTokens, ratio(r.usage.promptTokens, c.in)],
      ['tokens out', c.out, r.usage.completionTokens, ratio(r.usage.completionTokens, c.out)],
      ['cost', usd(c.costUsd), usd(r.costUsd), ratio(r.costUsd, c.costUsd)],
      ['wall ms', c.ms, ms, ratio(ms, c.ms)],
      ['per-turn prompt tokens', c.perTurn.join(', '), r.promptTokensPerTurn.join(', '), ''],
    ],
    checks: [
      { what: 'completed in 3 turns with 2 tool runs', ok: r.status === 'completed' && r.turns === 3 && r.toolRuns === 2 },
      { what: 'prompt tokens rise every turn', ok: r.promptTokensPerTurn.every((t, i, a) => i === 0 || t > a[i - 1]) },
    ],
  };
}

async function runawayCaps(): Promise<Table> {
  const caps = fast ? [8, 20] : [8, 20, 50, 100];
  const results = new Map<number, RunResult>();
  for (const cap of caps) results.set(cap, (await run({ task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: cap, maxBudgetUsd: null } })).r);
  const rows: (string | number)[][] = caps.map((cap) => {
    const r = results.get(cap)!;
    const theirs = CHAPTER.runawayInputTokens[cap];
    return [cap, theirs ?? '—', r.usage.promptTokens, theirs ? ratio(r.usage.promptTokens, theirs) : '—', cap === 20 ? usd(CHAPTER.runaway20CostUsd) : '—', usd(r.costUsd), r.status];
  });
  const checks = caps.map((cap) => ({ what: `cap ${cap}: max_turns_exceeded after exactly ${cap} turns`, ok: results.get(cap)!.status === 'max_turns_exceeded' && results.get(cap)!.turns === cap }));
  if (results.has(50) && results.has(100)) {
    const t = results.get(100)!.usage.promptTokens / results.get(50)!.usage.promptTokens;
    const c = results.get(100)!.costUsd / results.get(50)!.costUsd;
    rows.push(['50→100', `×${CHAPTER.runaway50to100.tokens} tokens, ×${CHAPTER.runaway50to100.cost} cost`, `×${t.toFixed(2)} tokens, ×${c.toFixed(2)} cost`, '', '', '', '']);
    checks.push({ what: 'doubling the cap more than triples the tokens (Θ(n²))', ok: t > 3 && c > 3 });
    writeChart(caps.map((cap) => [cap, results.get(cap)!.usage.promptTokens]));
  }
  return { title: 'runaway by turn cap (dedupe off)', header: ['cap', 'chapter in', 'ours in', 'ratio', 'chapter cost', 'ours cost', 'exit'], rows, checks };
}

async function runawayBudgets(): Promise<Table> {
  const rows: (string | number)[][] = [];
  const checks: Table['checks'] = [];
  for (const budget of fast ? [0.01] : [0.005, 0.01, 0.05]) {
    const { r, id } = await run({ task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: null, maxBudgetUsd: budget } });
    const last = readTrace(stack.traceDir, id).filter((l) => l.type === 'turn').at(-1)!;
    const lastTurn = Number(last.turnCostUsd);
    rows.push([usd(budget), budget === CHAPTER.budget.budgetUsd ? usd(CHAPTER.budget.spentUsd) : '—', usd(r.costUsd), r.turns, usd(r.costUsd - budget), usd(lastTurn)]);
    checks.push({ what: `budget ${usd(budget)}: budget_exceeded, overshoot under one turn`, ok: r.status === 'budget_exceeded' && r.costUsd >= budget && r.costUsd - budget < lastTurn });
  }
  return { title: 'runaway by budget, no turn cap', header: ['budget', 'chapter spent', 'ours spent', 'turns bought', 'overshoot', 'last turn cost'], rows, checks };
}

async function recover(): Promise<Table> {
  const out = new Map<string, RunResult>();
  for (const p of ['fatal', 'generic', 'describe'] as const) out.set(p, (await run({ task, model: 'recover', toolErrors: p })).r);
  const f = out.get('fatal')!;
  const d = out.get('describe')!;
  return {
    title: 'recover under three tool-error policies',
    header: ['policy', 'status', 'answer', 'cost', 'vs fatal (chapter: describe 4.7×)'],
    rows: [...out].map(([p, r]) => [p, r.status, r.output ?? r.error ?? '', usd(r.costUsd), ratio(r.costUsd, f.costUsd)]),
    checks: [
      { what: 'fatal fails', ok: f.status === 'failed' },
      { what: 'generic gives up politely', ok: out.get('generic')!.output === 'I could not read the file, so I do not know.' },
      { what: 'only describe answers, at several times the cost of fatal', ok: d.output === 'errors.log mentions a timeout.' && d.costUsd / f.costUsd > 3 },
    ],
  };
}

async function forbidden(): Promise<Table> {
  const { r } = await run({ task, model: 'forbidden', limits: { maxTurns: 12 } });
  const poisoned = (await run({ task, model: 'forbidden', limits: { maxTurns: 12 } }, undefined, { permanentToolErrors: 'retry' })).r;
  const c = CHAPTER.forbidden;
  return {
    title: 'forbidden read (chapter: no permanent-error stop; ours: stop on the first refusal)',
    header: ['', 'turns', 'tool runs', 'tokens in', 'cost', 'exit'],
    rows: [
      ['chapter', c.turns, c.toolRuns, c.in, usd(c.costUsd), 'max_turns_exceeded'],
      ['ours, permanentToolErrors: retry (the chapter\'s loop)', poisoned.turns, poisoned.toolRuns, poisoned.usage.promptTokens, usd(poisoned.costUsd), poisoned.status],
      ['ours, default (stop)', r.turns, r.toolRuns, r.usage.promptTokens, usd(r.costUsd), `${r.status}: ${(r.error ?? '').slice(0, 60)}…`],
    ],
    checks: [
      // Ours runs the 12th reply's call before stopping (pending calls drain first, so the transcript stays valid): 12 runs, not 11.
      { what: 'the chapter\'s loop burns the cap: 12 turns, a dozen identical tool runs, no answer', ok: poisoned.status === 'max_turns_exceeded' && poisoned.turns === 12 && poisoned.toolRuns >= 11 && !poisoned.output },
      { what: 'ours stops with a reason at turn 1, long before the cap', ok: r.status === 'failed' && r.turns === 1 },
    ],
  };
}

async function duplicate(): Promise<Table> {
  const base = (await run({ task, model: 'plan' })).r;
  const off = (await run({ task, model: 'duplicate', dedupe: 'off' })).r;
  const cached = (await run({ task, model: 'duplicate', dedupe: 'readOnly' })).r;
  const extra = off.costUsd - base.costUsd;
  return {
    title: 'a repeated call (duplicate vs plan)',
    header: ['', 'chapter', 'ours'],
    rows: [
      ['extra cost', usd(CHAPTER.duplicate.extraUsd), usd(extra)],
      ['extra %', `+${CHAPTER.duplicate.extraPct} %`, `+${((extra / base.costUsd) * 100).toFixed(0)} %`],
      ['tool runs, dedupe off / read-only cache', '3 / 2', `${off.toolRuns} / ${cached.toolRuns}`],
      ['cost, dedupe off / read-only cache', 'equal', `${usd(off.costUsd)} / ${usd(cached.costUsd)}`],
    ],
    checks: [{ what: 'the cache saves the tool run, not the turn', ok: cached.toolRuns === off.toolRuns - 1 && Math.abs(cached.costUsd - off.costUsd) < 1e-12 }],
  };
}

async function cacheOnWrites(): Promise<Table> {
  const approveBoth = async (h: WorkflowHandle) => {
    for (const c of ['c1', 'c2']) {
      await waitForApproval(h, c);
      await h.signal(approveSignal, { callId: c, by: 'experiments' });
    }
  };
  const naive = (await run({ task: 'Free space.', model: 'destructive_twice', dedupe: 'all', workspace: `w${++n}` }, approveBoth)).r;
  const gate = (await run({ task: 'Free space.', model: 'destructive_twice', dedupe: 'readOnly', workspace: `w${++n}` }, approveBoth)).r;
  return {
    title: 'cache on writes (destructive_twice)',
    header: ['cache', 'chapter turns / tool runs', 'ours turns / tool runs'],
    rows: [
      ['naive (all)', `${CHAPTER.cacheOnWrites.naive.turns} / ${CHAPTER.cacheOnWrites.naive.toolRuns}`, `${naive.turns} / ${naive.toolRuns}`],
      ['read-only gate', `${CHAPTER.cacheOnWrites.gate.turns} / ${CHAPTER.cacheOnWrites.gate.toolRuns}`, `${gate.turns} / ${gate.toolRuns}`],
    ],
    checks: [{ what: 'the naive cache swallows the second write; the gate runs both', ok: naive.toolRuns === 1 && gate.toolRuns === 2 }],
  };
}

async function approval(): Promise<Table> {
  const rows: (string | number)[][] = [];
  const approved = await run({ task, model: 'destructive', workspace: `w${++n}` }, async (h) => {
    const s = await waitForApproval(h, 'c2');
    rows.push(['parked', 'stops at turn 2, nothing deleted', `turn ${s.turns}, ${s.status}/${s.interruption?.type}`]);
    await h.signal(approveSignal, { callId: 'c2', by: 'experiments' });
  });
  const rejected = await run({ task, model: 'destructive', workspace: `w${++n}` }, async (h) => {
    await waitForApproval(h, 'c2');
    await h.signal(rejectSignal, { callId: 'c2', reason: 'access.log is needed', by: 'experiments' });
  });
  const empty = await run(
    { task, model: 'destructive', workspace: `w${++n}` },
    async (h) => {
      await waitForApproval(h, 'c2');
      await h.signal(rejectSignal, { callId: 'c2', by: 'experiments' });
    },
    { emptyRejection: true },
  );
  rows.push(['approved', '3 turns, deleted', `${approved.r.turns} turns: "${approved.r.output}"`]);
  rows.push(['rejected with a reason', '3 turns, nothing deleted', `${rejected.r.turns} turns: "${rejected.r.output}"`]);
  rows.push(['rejected, empty decision (experimental)', 'the agent claims it deleted', `${empty.r.turns} turns: "${empty.r.output}"`]);
  return {
    title: 'approval (destructive)',
    header: ['case', 'chapter', 'ours'],
    rows,
    checks: [
      { what: 'approve deletes', ok: approved.r.output === 'Deleted access.log to free space.' },
      { what: 'a rejection with its reason is told, not hidden', ok: rejected.r.output === 'I did not delete anything: you declined the deletion.' },
      { what: 'an empty decision reproduces the lie', ok: empty.r.output === 'Deleted access.log to free space.' },
    ],
  };
}

async function cancel(): Promise<Table> {
  const plain = await run({ task: 'Scan.', model: 'slow' });
  let stopAt = 0;
  const stopped = await run({ task: 'Scan.', model: 'slow' }, async (h) => {
    await new Promise((res) => setTimeout(res, 1200));
    stopAt = Date.now();
    await h.signal(cancelSignal, { reason: 'user pressed Stop' });
  });
  const endedMs = Date.now() - stopAt;
  const progress = readTrace(stack.traceDir, stopped.id).filter((l) => l.type === 'tool_progress');
  const lastProgress = Date.parse(progress.at(-1)?.ts ?? new Date(0).toISOString()) - stopAt;
  return {
    title: 'cancel (slow)',
    header: ['case', 'chapter', 'ours'],
    rows: [
      ['no cancel', `${CHAPTER.cancel.noCancelMs} ms, completed`, `${plain.ms} ms, ${plain.r.status}`],
      ['Stop at 1.2 s', `${CHAPTER.cancel.stoppedAtMs} ms, interrupted`, `${stopped.ms} ms, ${stopped.r.status}`],
      ['reason', 'user pressed Stop', stopped.r.interruption?.type === 'cancelled' ? stopped.r.interruption.reason : ''],
      ['cancel → result (ms, measured by the client)', '2', `≤ ${endedMs}`],
      ['progress lines / last one vs the Stop', '—', `${progress.length} / ${lastProgress} ms`],
    ],
    checks: [
      { what: 'interrupted/cancelled with the reason', ok: stopped.r.status === 'interrupted' && stopped.r.interruption?.type === 'cancelled' },
      { what: 'no progress after the Stop', ok: lastProgress < 100 },
    ],
  };
}

async function latency(): Promise<Table> {
  const rows: (string | number)[][] = [];
  const checks: Table['checks'] = [];
  for (const ms of [0, 50, 200, 1000]) {
    const m = `[lat-${ms}-${++n}]`;
    if (ms) {
      await addFault(stack.providerUrl, { match: { taskIncludes: m }, fault: { type: 'delay', ms }, times: 3 });
    }
    const { r, ms: wall } = await run({ task: `${task} ${m}`, model: 'plan' });
    const overhead = (wall - r.turns * ms) / r.turns;
    rows.push([ms, r.turns, wall, r.turns * ms, overhead.toFixed(0)]);
    checks.push({ what: `latency ${ms} ms: wall time is at least turns × latency`, ok: wall >= r.turns * ms });
  }
  return { title: 'latency: the same 3-turn task at four provider latencies', header: ['latency ms', 'turns', 'wall ms', 'turns × latency', 'harness ms per turn'], rows, checks };
}

async function subAgent(): Promise<Table> {
  const answered = await run({ task, model: 'research', tools: ['research'] });
  const runaway = await run({ task, model: 'research_runaway', tools: ['research'] });
  const stop = await run({ task: `${task} [stop-tree]`, model: 'research', tools: ['research'] }, async (h) => {
    await addFault(stack.providerUrl, { match: { model: 'research', turn: 1, taskIncludes: 'what does it say?' }, fault: { type: 'delay', ms: 3000 }, times: 1 });
    await new Promise((res) => setTimeout(res, 500));
    await h.signal(cancelSignal, { reason: 'user pressed Stop' });
  });
  const child = async (id: string) => (await stack.client.workflow.getHandle(`${id}/m1/r1/research`).result()) as RunResult;
  const [c1, c2, c3] = await Promise.all([child(answered.id), child(runaway.id), child(stop.id)]);
  const row = (name: string, p: RunResult, c: RunResult) => [name, `${p.status}, ${p.turns} turns`, `${c.status}, ${c.turns} turns`, usd(p.children.costUsd), usd(p.costUsd)];
  return {
    title: 'sub-agent (research)',
    header: ['case', 'parent', 'child', 'children spend', 'parent total'],
    rows: [row('answers', answered.r, c1), row('child runs away', runaway.r, c2), row('one Stop', stop.r, c3)],
    checks: [
      { what: 'the child answers and the parent gets the summary', ok: answered.r.status === 'completed' && (answered.r.output ?? '').includes('worker 7') },
      { what: 'a runaway child stops at its own cap (6) and the parent carries on', ok: c2.status === 'max_turns_exceeded' && c2.turns === 6 && runaway.r.status === 'completed' },
      { what: 'one Stop ends parent and child', ok: stop.r.status === 'interrupted' && c3.status === 'interrupted' },
      { what: "the parent's total includes its children's spend", ok: Math.abs(runaway.r.children.costUsd - c2.costUsd) < 1e-12 && runaway.r.costUsd > c2.costUsd },
    ],
  };
}

async function resume(): Promise<Table> {
  const taskQueue = 'exp-resume';
  const opts = { address: stack.address, taskQueue, traceDir: stack.traceDir, workspaceRoot: stack.workspaceRoot, llmBaseUrl: stack.providerUrl };
  const first = await startWorkerProcess(opts);
  const id = `exp-resume-${++n}`;
  const t0 = performance.now();
  const h = await stack.client.workflow.start('agentRun', { taskQueue, workflowId: id, args: [{ task, model: 'plan' }], workflowTaskTimeout: '2s' });
  const trace = () => readTrace(stack.traceDir, id);
  // Die right after turn 2's tool ran, as the chapter's process did.
  for (;;) {
    if (trace().filter((l) => l.type === 'tool_result').length >= 2) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  await first.kill();
  const before = trace().filter((l) => l.type === 'turn').at(-1)!;
  const second = await startWorkerProcess(opts);
  const r = (await h.result()) as RunResult;
  const ms = Math.round(performance.now() - t0);
  await second.kill();
  const uncrashed = (await run({ task, model: 'plan' })).r;
  const runs = trace().filter((l) => l.type === 'tool_exec').map((l) => `${String(l.toolName)}@${String(l.pid) === String(first.child.pid) ? 'first' : 'second'}`);
  return {
    title: 'resume: a worker process killed with SIGKILL after turn 2, a new one started',
    header: ['', 'chapter', 'ours'],
    rows: [
      ['died after turn 2', 'turns=2 cost=$0.001570', `turns=${String(before.turn)} cost=${usd(Number(before.costUsd))}`],
      ['resumed and finished', 'turns=3 cost=$0.002470 completed', `turns=${r.turns} cost=${usd(r.costUsd)} ${r.status} (${ms} ms)`],
      ['tool runs across both processes', 'list_files, read_file:errors.log', runs.join(', ')],
      ['the uncrashed run', '—', `turns=${uncrashed.turns} cost=${usd(uncrashed.costUsd)}`],
    ],
    checks: [
      { what: 'finished with the uncrashed result and cost', ok: r.status === 'completed' && r.turns === uncrashed.turns && Math.abs(r.costUsd - uncrashed.costUsd) < 1e-12 },
      { what: 'each tool ran once, across both processes', ok: runs.length === 2 },
    ],
  };
}

/**
 * A fork of a 20-turn run at turn 10 (issue 17): the fork's first 10 turns
 * come from the source's history. Counted from the fork's own history (model
 * activities by their "model turn N" label) and trace (tool starts by the
 * turn whose reply asked for them): nothing of turns 1-10 runs again.
 */
async function fork(): Promise<Table> {
  const source = await run({ task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: 20, maxBudgetUsd: null } });
  const t0 = performance.now();
  const forked = await run({ forkFrom: { run: source.id, atTurn: 10 } } as never);
  const ms = Math.round(performance.now() - t0);
  // Model calls by the turn they are labelled with; tool starts by the turn whose reply asked (runaway's turn t asks for c<t-1>).
  const counted = async (id: string) => {
    const model: number[] = [];
    for (const e of (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? []) {
      const summary = e.activityTaskScheduledEventAttributes && e.userMetadata?.summary?.data;
      const m = summary ? /model turn (\d+)/.exec(Buffer.from(summary).toString('utf8')) : null;
      if (m) model.push(Number(m[1]));
    }
    const lines = readTrace(stack.traceDir, id);
    const tools = lines.filter((l) => l.type === 'tool_start').map((l) => Number(String(l.callId).slice(1)) + 1);
    return { model, tools, execs: lines.filter((l) => l.type === 'tool_exec').length };
  };
  const src = await counted(source.id);
  const fk = await counted(forked.id);
  const early = (turns: number[]) => turns.filter((t) => t <= 10).length;
  const late = (turns: number[]) => turns.filter((t) => t > 10).length;
  const f = forked.r;
  const s = source.r;
  return {
    title: 'fork of a 20-turn run (runaway, cap 20) at turn 10',
    header: ['', 'source', 'fork'],
    rows: [
      ['turns / status', `${s.turns} ${s.status}`, `${f.turns} ${f.status}`],
      ['model calls in turns 1-10', early(src.model), early(fk.model)],
      ['tool executions in turns 1-10', early(src.tools), early(fk.tools)],
      ['model calls in turns 11-20', late(src.model), late(fk.model)],
      ['tool executions in turns 11-20', late(src.tools), late(fk.tools)],
      ['tool_exec lines (tool activity attempts)', src.execs, fk.execs],
      ['cost', usd(s.costUsd), `${usd(f.costUsd)} own + ${usd(f.forkedFrom?.inheritedCostUsd ?? NaN)} inherited`],
      ['turn 11 prompt tokens', s.promptTokensPerTurn[10], f.promptTokensPerTurn[0]],
      ['wall ms', source.ms, ms],
    ],
    checks: [
      { what: 'no model call and no tool execution for turns 1-10 in the fork', ok: early(fk.model) === 0 && early(fk.tools) === 0 && early(src.model) === 10 },
      { what: 'the fork makes its own 10 model calls and 10 tool runs after turn 10', ok: late(fk.model) === 10 && late(fk.tools) === 10 && f.toolRuns === 10 && f.turns === 20 },
      { what: 'turn 11 sends the same prompt as the source\'s turn 11 (same tokens)', ok: f.promptTokensPerTurn[0] === s.promptTokensPerTurn[10] },
      { what: 'own cost + inherited cost = the source\'s cost', ok: Math.abs(f.costUsd + (f.forkedFrom?.inheritedCostUsd ?? NaN) - s.costUsd) < 1e-9 },
    ],
  };
}

/**
 * The chapter's real-model run: six small tasks over the seeded workspace. (Its
 * exact task texts are not in our sources; these ask the same kind of thing.)
 */
const REAL_TASKS = [
  'Which file in the workspace is the largest?',
  'Which file mentions a timeout, and which worker timed out?',
  'What does notes.txt ask me to do?',
  'How many files are in the workspace?',
  'Does access.log contain any POST request?',
  'After how many milliseconds did the worker time out?',
];

async function realModel(): Promise<Table> {
  const rows: (string | number)[][] = [];
  const results: RunResult[] = [];
  const ids: string[] = [];
  let turnMs = 0;
  for (const [i, t] of REAL_TASKS.entries()) {
    // Unattended: a deletion the model asks for is refused by the clock after 5 s.
    const { r, ms, id } = await run({ task: t, model: realLlm.model ?? 'plan', workspace: `real${i}`, limits: { maxTurns: 8, maxBudgetUsd: 0.05 }, approvalTimeoutMs: 5000 });
    results.push(r);
    ids.push(id);
    turnMs += ms;
    const calls = readTrace(stack.traceDir, id).filter((l) => l.type === 'tool_start').map((l) => `${String(l.toolName)}${l.args && Object.keys(l.args as object).length ? ` ${JSON.stringify(l.args)}` : ''}`);
    const exit = r.interruption?.type === 'approval' ? `interrupted: ${r.interruption.toolName} ${JSON.stringify(r.interruption.args)} refused after 5 s` : r.status;
    rows.push([i + 1, t, r.turns, calls.join('; ') || '—', r.turns ? Math.round(ms / r.turns) : '—', `${r.usage.promptTokens}/${r.usage.completionTokens}`, exit, (r.output ?? r.error ?? '').replace(/\s+/g, ' ').slice(0, 100)]);
  }
  const totalTurns = results.reduce((a, r) => a + r.turns, 0);
  const cutAtCap = ids.filter((id) => readTrace(stack.traceDir, id).some((l) => l.type === 'turn' && l.finish === 'length')).length;
  return {
    title: `real model at ${realLlm.baseUrl} (${realLlm.model ?? 'model from input'}): mean turn ${totalTurns ? Math.round(turnMs / totalTurns) : 0} ms; turns per task ${results.map((r) => r.turns).join(', ')}`,
    header: ['#', 'task', 'turns', 'tool calls', 'ms/turn', 'tokens in/out', 'exit', 'answer'],
    rows: [...rows, ['', 'chapter: Qwen2.5-0.5B-Instruct, greedy, CPU', 'every task 2', '', 'mean 6,908', '', 'completed', 'wrong answers']],
    checks: [
      { what: 'every run ended in one of the five exits, within its limits', ok: results.every((r) => ['completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'].includes(r.status) && r.turns <= 8 && r.costUsd <= 0.05 + 0.01) },
    ],
    notes: [
      `${results.filter((r) => r.toolRuns === 0).length} of ${results.length} tasks were answered without looking at a single file (the answers are invented).`,
      `${cutAtCap} of ${results.length} runs ended on a reply cut at the 256-token cap (finish "length"): the model rambles.`,
      ...results.flatMap((r, i) => (r.interruption?.type === 'approval' ? [`Task ${i + 1}: the model asked to delete ${JSON.stringify(r.interruption.args)} — nobody asked for that; the harness parked the call, no one approved, and it was refused.`] : [])),
      'The harness did its part on every run: one of the five exits, the limits held, every call answered or refused in words. A harness makes an agent governable, not correct.',
    ],
  };
}

function writeChart(points: [number, number][]): void {
  const w = 480, hgt = 240, pad = 40;
  const maxX = Math.max(...points.map(([x]) => x)), maxY = Math.max(...points.map(([, y]) => y));
  const px = (x: number) => pad + (x / maxX) * (w - 2 * pad);
  const py = (y: number) => hgt - pad - (y / maxY) * (hgt - 2 * pad);
  const line = points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
  const dots = points.map(([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3"/><text x="${px(x).toFixed(1)}" y="${(py(y) - 8).toFixed(1)}" font-size="10" text-anchor="middle">${y}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${hgt}" font-family="sans-serif"><text x="${w / 2}" y="16" text-anchor="middle" font-size="12">runaway: input tokens against the turn cap</text><line x1="${pad}" y1="${hgt - pad}" x2="${w - pad}" y2="${hgt - pad}" stroke="#888"/><line x1="${pad}" y1="${pad}" x2="${pad}" y2="${hgt - pad}" stroke="#888"/>${points.map(([x]) => `<text x="${px(x).toFixed(1)}" y="${hgt - pad + 14}" font-size="10" text-anchor="middle">${x}</text>`).join('')}<polyline fill="none" stroke="#2563eb" stroke-width="2" points="${line}"/>${dots}</svg>`;
  mkdirSync(join(import.meta.dirname, '..', 'reports'), { recursive: true });
  writeFileSync(join(import.meta.dirname, '..', 'reports', 'runaway-tokens.svg'), svg);
}

const budgetModes = () => softVsHardBudget(run, async (id) => (await stack.client.workflow.getHandle(id).result()) as RunResult);
// --only NAME: one experiment by its function's name (e.g. --only budgetModes).
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const all = real
  ? [realModel]
  : fast
  ? [plan, runawayCaps, runawayBudgets, recover, duplicate, cacheOnWrites, budgetModes]
  : [plan, runawayCaps, runawayBudgets, recover, forbidden, duplicate, cacheOnWrites, approval, resume, cancel, latency, subAgent, budgetModes, fork];
const experiments = only ? all.filter((e) => e.name === only) : all;
if (only && experiments.length === 0) throw new Error(`--only ${only}: no such experiment (${all.map((e) => e.name).join(', ')})`);
const t0 = performance.now();
await stack.worker.runUntil(async () => {
  for (const e of experiments) tables.push(await e());
});
await stack.close();
await localModel?.stop();

const md: string[] = [`# Experiments (${only ?? (real ? 'real model' : fast ? 'fast subset' : 'full')}), ${new Date().toISOString()}`, ''];
let failed = 0;
for (const t of tables) {
  md.push(`## ${t.title}`, '', `| ${t.header.join(' | ')} |`, `|${t.header.map(() => '---').join('|')}|`, ...t.rows.map((r) => `| ${r.join(' | ')} |`), '');
  for (const c of t.checks) {
    md.push(`- ${c.ok ? '✔' : '✘'} ${c.what}`);
    if (!c.ok) failed += 1;
  }
  if (t.notes?.length) md.push('', ...t.notes.map((n) => `- ${n}`));
  md.push('');
  console.log(`\n${t.title}`);
  console.table(t.rows.map((r) => Object.fromEntries(t.header.map((h, i) => [h, r[i]]))));
  for (const c of t.checks) console.log(`${c.ok ? '✔' : '✘'} ${c.what}`);
  for (const n of t.notes ?? []) console.log(`- ${n}`);
}
if (!fast && !real && !only) md.push('![runaway input tokens](runaway-tokens.svg)', '');
mkdirSync(join(import.meta.dirname, '..', 'reports'), { recursive: true });
writeFileSync(join(import.meta.dirname, '..', 'reports', only ? `experiments-${only}.md` : real ? 'experiments-real.md' : fast ? 'experiments-fast.md' : 'experiments.md'), md.join('\n'));
console.log(`\n${tables.length} experiments, ${failed} failed checks, ${Math.round(performance.now() - t0)} ms`);
process.exit(failed ? 1 : 0);
