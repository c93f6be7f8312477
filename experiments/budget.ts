// Soft against hard budget (limits.budgetMode), on the chapter's runaway and
// on a parent that starts three research sub-agents: what each spends, by
// how much it passes its budget, how many turns it bought. Part of
// `npm run experiments` (alone: `npm run experiments -- --only budgetModes`).
import type { AgentInput, RunResult } from '../common/contract.js';

export interface BudgetTable {
  title: string;
  header: string[];
  rows: (string | number)[][];
  checks: { what: string; ok: boolean }[];
  notes?: string[];
}

type Run = (input: AgentInput) => Promise<{ r: RunResult; id: string }>;
type ChildResult = (workflowId: string) => Promise<RunResult>;

const usd = (n: number) => `$${n.toFixed(6)}`;

export async function softVsHardBudget(run: Run, childResult: ChildResult): Promise<BudgetTable> {
  const rows: (string | number)[][] = [];
  const checks: BudgetTable['checks'] = [];
  // "hard, min 64": a smaller minReplyTokens holds less per call, so fewer dollars are left unspent at the end.
  const modes = [
    { name: 'soft', limits: { budgetMode: 'soft' as const }, extra: {} },
    { name: 'hard', limits: { budgetMode: 'hard' as const }, extra: { budgetTimeoutMs: 1 } },
    { name: 'hard, min 64', limits: { budgetMode: 'hard' as const, minReplyTokens: 64 }, extra: { budgetTimeoutMs: 1 } },
  ];
  type Mode = (typeof modes)[number];
  const cases: { name: string; budget: number; input: (mode: Mode) => AgentInput; children: number }[] = [
    {
      name: 'runaway',
      budget: 0.01,
      children: 0,
      input: (mode) => ({ task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: null, maxBudgetUsd: 0.01, ...mode.limits }, ...mode.extra }),
    },
    {
      name: 'parent + 3 sub-agents',
      budget: 0.01,
      children: 3,
      // Each child lists files for 6 turns (its own cap); the parent then answers.
      input: (mode) => ({ task: 'tree:c0t6,c1t6,c2t6', model: 'tree', tools: ['research'], limits: { maxTurns: 10, maxBudgetUsd: 0.01, ...mode.limits }, ...mode.extra }),
    },
  ];
  for (const c of cases) {
    for (const mode of modes) {
      const { r, id } = await run(c.input(mode));
      let childTurns = 0;
      let childrenRun = 0;
      for (let i = 0; i < c.children; i++) {
        const child = await childResult(`${id}/m1/r${i}/research`).catch(() => null);
        if (child) {
          childrenRun += 1;
          childTurns += child.turns;
        }
      }
      const overshoot = Math.max(0, r.costUsd - c.budget);
      rows.push([c.name, mode.name, usd(c.budget), usd(r.costUsd), usd(overshoot), r.turns + childTurns, c.children ? `${childrenRun} of ${c.children}` : '—', r.status]);
      if (mode.limits.budgetMode === 'hard') checks.push({ what: `${c.name}, ${mode.name}: spend within the budget (${usd(r.costUsd)} ≤ ${usd(c.budget)})`, ok: r.costUsd <= c.budget });
      else checks.push({ what: `${c.name}, soft: stops on the budget`, ok: r.status === 'budget_exceeded' });
    }
  }
  return {
    title: 'soft vs hard budget',
    header: ['case', 'mode', 'budget', 'spent', 'overshoot', 'turns completed (tree)', 'children run', 'status'],
    rows,
    checks,
    notes: ['hard: each call held at its worst case (prompt counted + the max_tokens sent, minReplyTokens 256 unless said); children hold an even share of what is left before they start; budgetTimeoutMs 1 ms ends a parked run'],
  };
}
