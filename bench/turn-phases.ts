// Where a turn of ours goes, read from the runs' own histories: TURN_PHASES_RUNS
// (default 8) 20-turn `narrated` runs of the shipped worker, nobody reading
// (TURN_PHASES_VARIANT: a row of ./turns.ts, default oursStreamed; `peer`
// for the peer's, whose turn is two tasks and two activities),
// after one warm-up run, on the bench's stack (./turns.ts). Prints min /
// median / max of: the run's wall time; the first workflow task (the run's
// start: its configuration resolved, its first model call sent); the turns
// between it and the last task; the last task (the run's end); and, for the
// turns in between, every step from one history event to the next (the
// activity's run, the workflow task's wait for the worker and its run on the
// worker). The account of reports/turn-account.md.
// Run: npx tsx bench/turn-phases.ts
import proto from '@temporalio/proto';
import { fmt, oneRun, startTurnStack, stat, VARIANTS, type Variant } from './turns.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const RUNS = Number(process.env.TURN_PHASES_RUNS ?? 8);
const TURNS = 20;
const VARIANT = (process.env.TURN_PHASES_VARIANT ?? 'oursStreamed') as Variant;
if (!VARIANTS.includes(VARIANT) || VARIANT === 'floor') throw new Error(`TURN_PHASES_VARIANT must be one of ${VARIANTS.filter((v) => v !== 'floor').join(', ')}, got ${JSON.stringify(VARIANT)}`);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`TURN_PHASES_RUNS must be a whole number of 1 or more, got ${JSON.stringify(process.env.TURN_PHASES_RUNS)}`);

const figures = new Map<string, number[]>();
const add = (name: string, ms: number) => {
  const seen = figures.get(name);
  if (seen) seen.push(ms);
  else figures.set(name, [ms]);
};
const name = (t: number | null | undefined) => (EventType[t ?? 0] ?? String(t)).replace('EVENT_TYPE_', '');

const ts = await startTurnStack();
try {
  for (let i = 0; i <= RUNS; i++) {
    const run = await oneRun(ts, VARIANT, 'narrated', TURNS);
    if (i === 0 || run.workflowId === null) continue;
    const events = (await ts.stack.client.workflow.getHandle(run.workflowId).fetchHistory()).events ?? [];
    const at = events.map((e) => ({ ms: Number(e.eventTime?.seconds ?? 0) * 1000 + Number(e.eventTime?.nanos ?? 0) / 1e6, type: name(e.eventType) }));
    const firstDone = at.find((e) => e.type === 'WORKFLOW_TASK_COMPLETED')!.ms;
    const lastScheduled = [...at].reverse().find((e) => e.type === 'WORKFLOW_TASK_SCHEDULED')!.ms;
    add('run, wall time (client)', run.msPerTurn * TURNS);
    add('first workflow task (start → its completion)', firstDone - at[0].ms);
    add(`turns between (${TURNS - 1})`, lastScheduled - firstDone);
    add('last workflow task (scheduled → run closed)', at[at.length - 1].ms - lastScheduled);
    // The turns in between, step by step (the first task's and the last's events left out).
    for (let j = 6; j < at.length - 4; j++) add(`  ${at[j - 1].type} → ${at[j].type}`, at[j].ms - at[j - 1].ms);
  }
} finally {
  await ts.close();
}
console.log(`${VARIANT}: ms, min / median / max over ${RUNS} runs of ${TURNS} turns (steps: over every turn of them)`);
for (const [k, v] of figures) console.log(`${k}: ${fmt(stat(v), 2)}`);
process.exit(0);
