// The harness's promises as properties over generated inputs and orders, on
// the pure modules the workflow runs (no Temporal here: thousands of cases in
// a second). test/interleavings.test.ts checks the same invariants end to end
// on a real server. A failure prints fast-check's seed and path; re-run with
// PROPERTY_SEED=<seed> to reproduce it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inputFromFlags } from '../../client/cli.js';
import { ApprovalRules } from '../../workflows/approval-rules.js';
import { argsHash } from '../../common/args-hash.js';
import { InputError } from '../../common/input.js';
import type { Exit } from '../../workflows/exits.js';
import { budgetLeft, SoftBudget } from '../../workflows/budget.js';
import { nextStep, takeReply } from '../../workflows/next-step.js';
import { cacheKey, parseCall } from '../../workflows/tool-calls.js';
import { capToolResult, declinedText, toolResultMessage, type Decision } from '../../common/transcript-text.js';
import { initialState, recordChildSpend } from '../../workflows/run-state.js';
import { turnCostUsd } from '../../common/turn-cost.js';
import { parseBuiltin, specs } from '../helpers/builtin-specs.js';
import type { ChatMessage, ModelReply, RunConfig, ToolCall, ToolName } from '../../common/contract.js';
import { propertyParams } from '../helpers/property.js';

const params = propertyParams();

// --- approvals: any batch of decision messages, in any order, valid or not

type Verdict = 'approve' | 'reject';
type Message =
  | { kind: 'signal' | 'update'; verdict: unknown; payload: unknown }
  /** The loop takes the decisions of the activation and moves to the next call. */
  | { kind: 'loop_resumes' };

const CALLS = ['c1', 'c2', 'c3'];
/** The parked calls' arguments hash to HASH_A; HASH_B names other arguments. */
const HASH_A = argsHash({ path: 'a' });
const HASH_B = argsHash({ path: 'b' });
const payloadArb = fc.oneof(
  fc.record({
    callId: fc.constantFrom(...CALLS, 'c9', ''),
    by: fc.option(fc.constantFrom('alice', 'bob', ' '), { nil: undefined }),
    reason: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    // The awaited call's own hash (either case), another call's, or a malformed one.
    argsHash: fc.option(fc.constantFrom<unknown>(HASH_A, HASH_A.toUpperCase(), HASH_B, 'abc', 42), { nil: undefined }),
  }),
  fc.constantFrom(null, {}, 'c2', 42, { callId: 5 }, { callId: null }, []),
);
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('signal' as const, 'update' as const), verdict: fc.constantFrom<unknown>('approve', 'reject', 'approve', 'reject', 'maybe', undefined), payload: payloadArb }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'loop_resumes' as const }) },
);

describe('approval desk, under any interleaving of decisions', () => {
  it('at most one decision per call, it is the first valid one for the awaited call, and it never changes', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 40 }), (messages) => {
        const desk = new ApprovalRules();
        const key = (callId: string) => `run@chain/m${CALLS.indexOf(callId) * 2 + 2}/${callId}`;
        let next = 0;
        const park = () => {
          desk.awaiting =
            next < CALLS.length ? { key: key(CALLS[next]), callId: CALLS[next], toolName: 'delete_file', args: { path: 'a' }, argsHash: HASH_A, hashRequired: false } : null;
          next += 1;
        };
        park();
        const firstAccepted = new Map<string, Verdict>();
        const ran: string[] = [];
        for (const m of messages) {
          if (m.kind === 'loop_resumes') {
            // The loop moves on only once the awaited call has a decision; an approved call runs, a rejected one never does.
            const awaited = desk.awaiting;
            if (awaited && desk.decisions[awaited.key]) {
              if (desk.decisions[awaited.key].decision === 'approve') ran.push(awaited.callId);
              park();
            }
            continue;
          }
          const before = JSON.stringify(desk.decisions);
          const awaitedBefore = desk.awaiting?.callId;
          // The update's validator and the signal handler ask the same question.
          const taken = desk.take(m.payload, m.verdict);
          if (taken.ok) {
            expect(taken.call.callId).toBe(awaitedBefore);
            expect(firstAccepted.has(taken.call.callId)).toBe(false);
            // A decision that names arguments is taken only for those arguments.
            const named = (m.payload as { argsHash?: unknown }).argsHash;
            if (named !== undefined) expect(String(named).toLowerCase()).toBe(HASH_A);
            firstAccepted.set(taken.call.callId, taken.decision.decision);
          } else {
            expect(JSON.stringify(desk.decisions)).toBe(before);
            const callId = (m.payload as { callId?: unknown } | null)?.callId;
            if (typeof callId === 'string' && firstAccepted.has(callId) && (m.verdict === 'approve' || m.verdict === 'reject')) {
              expect(taken.problem).toMatch(/^already decided/);
            }
          }
        }
        // One entry per decided call, holding the first verdict taken.
        expect(Object.keys(desk.decisions)).toHaveLength(firstAccepted.size);
        for (const [callId, verdict] of firstAccepted) expect(desk.decisions[key(callId)].decision).toBe(verdict);
        // A rejected call never reaches a tool.
        for (const callId of ran) expect(firstAccepted.get(callId)).toBe('approve');
      }),
      params,
    );
  });
});

// --- the loop: any sequence of replies (calls, answers, broken ones), any limits

const TOOLS: ToolName[] = ['list_files', 'read_file', 'delete_file', 'scan_archive'];
const callArb = fc.record({
  id: fc.oneof({ weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: fc.constant('') }),
  name: fc.constantFrom<string>(...TOOLS, 'rm_rf'),
  arguments: fc.constantFrom('{}', '{"path":"errors.log"}', '{"path":42}', '{"path":', '[]', ''),
});
const replyArb: fc.Arbitrary<ModelReply> = fc
  .record({
    calls: fc.array(callArb, { maxLength: 4 }),
    content: fc.option(fc.constantFrom('done', ''), { nil: null }),
    prompt: fc.integer({ min: 0, max: 50_000 }),
    completion: fc.integer({ min: 0, max: 2_000 }),
  })
  .map(({ calls, content, prompt, completion }) => ({
    message: {
      role: 'assistant' as const,
      content,
      ...(calls.length ? { tool_calls: calls.map((c): ToolCall => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
    },
    usage: { promptTokens: prompt, completionTokens: completion },
    finishReason: calls.length ? 'tool_calls' : 'stop',
  }));
const limitsArb = fc
  .record({
    maxTurns: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    maxBudgetUsd: fc.option(fc.double({ min: 0.0001, max: 0.5, noNaN: true }), { nil: null }),
  })
  .filter((l) => l.maxTurns !== null || l.maxBudgetUsd !== null);

interface Drive {
  exit: Exit;
  costs: number[];
  turns: number[];
  turnCosts: number[];
  messages: ChatMessage[];
}

/** Drives the loop's own decisions (nextStep, takeReply) with generated replies; decisions per call come from `decide`. */
function drive(cfg: RunConfig, replies: ModelReply[], decide: (call: ToolCall) => Decision | null): Drive {
  const s = initialState(cfg);
  const out: Drive = { exit: { status: 'failed', interruption: null, reason: 'replies ran out', error: 'replies ran out', errorType: 'TestScriptEnded' }, costs: [], turns: [], turnCosts: [], messages: s.messages };
  let r = 0;
  for (let guard = 0; guard < 500; guard++) {
    const step = nextStep(s, cfg);
    if (step.kind === 'stop') return { ...out, exit: step.exit };
    if (step.kind === 'drain') {
      const { call } = step.pending;
      const parsed = parseCall(call, cfg.toolSpecs);
      const d = parsed.ok ? decide(call) : null;
      const text = !parsed.ok ? `Error: ${parsed.error}` : d?.decision === 'reject' ? declinedText(parsed.toolName, d) : 'ran';
      s.messages.push(toolResultMessage(call, text));
      continue;
    }
    if (r >= replies.length) return out;
    const reply = replies[r++];
    const exit = takeReply(s, reply, cfg.pricing);
    out.costs.push(s.costUsd);
    out.turns.push(s.turns);
    out.turnCosts.push(turnCostUsd(reply.usage, cfg.pricing));
    if (exit) return { ...out, exit };
  }
  throw new Error('the loop did not stop');
}

/** One call as the approver saw it: an id alone may come back later on another call. */
function callKey(call: ToolCall): string {
  return `${call.id}|${call.function.name}|${call.function.arguments}`;
}

/** Each assistant reply's call ids, and the ids of the tool results between it and the next reply. */
function repliesWithResults(messages: ChatMessage[]): { asked: string[]; answered: string[] }[] {
  const out: { asked: string[]; answered: string[] }[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') out.push({ asked: (m.tool_calls ?? []).map((c) => c.id), answered: [] });
    else if (m.role === 'tool') out.at(-1)?.answered.push(m.tool_call_id);
  }
  return out;
}

describe('the loop, over any replies and limits', () => {
  it('turns and cost never decrease, the cap is never passed, the budget overshoots by at most the last turn, every kept call gets exactly one result', () => {
    fc.assert(
      fc.property(limitsArb, fc.array(replyArb, { maxLength: 16 }), (limits, replies) => {
        const cfg = parseBuiltin({ task: 't', limits, tools: TOOLS });
        const d = drive(cfg, replies, () => ({ decision: 'approve', reason: null, by: null }));
        for (let i = 1; i < d.costs.length; i++) {
          expect(d.costs[i]).toBeGreaterThanOrEqual(d.costs[i - 1]);
          expect(d.turns[i]).toBe(d.turns[i - 1] + 1);
        }
        const turns = d.turns.at(-1) ?? 0;
        if (cfg.maxTurns !== null) expect(turns).toBeLessThanOrEqual(cfg.maxTurns);
        if (cfg.maxBudgetUsd !== null && d.costs.length > 0) {
          // Spend was under the budget before the last turn was bought.
          const before = d.costs.length > 1 ? d.costs.at(-2)! : 0;
          expect(before).toBeLessThan(cfg.maxBudgetUsd);
          expect(d.costs.at(-1)! - cfg.maxBudgetUsd).toBeLessThanOrEqual(d.turnCosts.at(-1)! + 1e-12);
        }
        if (d.exit.status === 'max_turns_exceeded') expect(turns).toBe(cfg.maxTurns);
        // The protocol's two rules hold in whatever transcript the loop kept.
        // Per reply: a provider may send an id again in a later reply, so each reply's calls are matched
        // with the tool results that follow it, before the next reply.
        for (const { asked, answered } of repliesWithResults(d.messages)) {
          expect(new Set(asked).size).toBe(asked.length);
          expect(answered.every((id) => asked.includes(id))).toBe(true);
          if (d.exit.status !== 'failed') expect([...answered].sort()).toEqual([...asked].sort());
          else expect(new Set(answered).size).toBe(answered.length);
        }
      }),
      params,
    );
  });

  it('a rejected call is answered with the decision in words and never reported as run', () => {
    fc.assert(
      fc.property(fc.array(replyArb, { maxLength: 10 }), fc.func(fc.boolean()), (replies, rejects) => {
        const cfg = parseBuiltin({ task: 't', limits: { maxTurns: 10 }, tools: TOOLS });
        const rejected = new Set<string>();
        const d = drive(cfg, replies, (call) => {
          if (!rejects(call.id)) return { decision: 'approve', reason: null, by: 'alice' };
          // By id, tool and arguments: a provider may send an id again on a later, other call, and a call
          // whose arguments do not parse is answered with the error without being asked about.
          rejected.add(callKey(call));
          return { decision: 'reject', reason: 'no', by: 'bob' };
        });
        let lastCalls: ToolCall[] = [];
        for (const m of d.messages) {
          if (m.role === 'assistant') lastCalls = m.tool_calls ?? [];
          if (m.role !== 'tool') continue;
          const call = lastCalls.find((c) => c.id === m.tool_call_id);
          expect(call).toBeDefined();
          if (rejected.has(callKey(call!))) expect(m.content).toMatch(/^The user declined this .* call by bob; it was not run/);
          else expect(m.content).not.toMatch(/^The user declined/);
        }
      }),
      params,
    );
  });
});

// --- the budget of a tree: a parent and its research children

describe('one budget for a parent and its children', () => {
  it('the children of one reply never get more than the parent has left, and the tree overshoots by at most one turn of each run', () => {
    const turnCost = fc.double({ min: 0, max: 0.01, noNaN: true });
    const child = fc.record({ capUsd: fc.double({ min: 0.0001, max: 0.1, noNaN: true }), turns: fc.array(turnCost, { maxLength: 8 }) });
    fc.assert(
      fc.property(
        fc.double({ min: 0.0001, max: 0.1, noNaN: true }),
        // Each parent turn starts one to three children side by side (a soft budget batches them as a hard one does).
        fc.array(fc.record({ parentTurn: turnCost, children: fc.array(child, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 6 }),
        (budget, rounds) => {
          const cfg = parseBuiltin({ task: 't', limits: { maxBudgetUsd: budget, maxTurns: null } });
          const s = initialState(cfg);
          const soft = new SoftBudget({ cfg, state: s });
          const all: number[] = [];
          let lastRoundRuns = 1;
          for (const round of rounds) {
            if (nextStep(s, cfg).kind === 'stop') break;
            // The parent's turn asks for children.
            s.turns += 1;
            s.costUsd += round.parentTurn;
            all.push(round.parentTurn);
            const left = budgetLeft(s, cfg)!;
            const allowed = soft.reserve(round.children.map((c) => c.capUsd));
            // Together never more than is left; each never more than its own cap.
            expect(allowed.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(Math.max(0, left) + 1e-12);
            allowed.forEach((a, i) => expect(a).toBeLessThanOrEqual(round.children[i].capUsd));
            if (left <= 0) expect(allowed.every((a) => a === 0)).toBe(true);
            // Each child's loop: the same check before each of its turns, against its own budget.
            round.children.forEach((c, i) => {
              if (allowed[i] <= 0) return;
              let spent = 0;
              for (const t of c.turns) {
                if (spent >= allowed[i]) break;
                spent += t;
                all.push(t);
              }
              recordChildSpend(s, spent, { promptTokens: 0, completionTokens: 0 });
            });
            lastRoundRuns = 1 + round.children.length;
            if (s.costUsd >= budget) break; // checked the moment the children return
          }
          const biggest = Math.max(0, ...all);
          expect(s.costUsd - budget).toBeLessThanOrEqual(lastRoundRuns * biggest + 1e-12);
        },
      ),
      params,
    );
  });
});

// --- inputs: whatever arrives, a clear error or a configuration with a limit

describe('input', () => {
  it('any JSON input is either refused with an InputError naming a field, or resolved with at least one limit', () => {
    const field = fc.constantFrom('task', 'model', 'limits', 'toolErrors', 'dedupe', 'tools', 'workspace', 'pricing', 'approvalTimeoutMs', 'maxToolResultChars', 'bogus');
    fc.assert(
      fc.property(fc.dictionary(field, fc.jsonValue(), { maxKeys: 6 }), fc.option(fc.jsonValue()), (raw, limits) => {
        const input = limits === null ? raw : { ...raw, limits };
        try {
          const cfg = parseBuiltin(input);
          expect(cfg.maxTurns !== null || cfg.maxBudgetUsd !== null).toBe(true);
          if (cfg.maxTurns !== null) expect(Number.isInteger(cfg.maxTurns) && cfg.maxTurns > 0).toBe(true);
          if (cfg.maxBudgetUsd !== null) expect(cfg.maxBudgetUsd).toBeGreaterThan(0);
        } catch (err) {
          expect(err).toBeInstanceOf(InputError);
          expect((err as InputError).message).toMatch(/^invalid input: \S+/);
        }
      }),
      params,
    );
  });

  it('a numeric CLI flag is a positive number, "none", or a usage error naming the flag: never a silent missing limit', () => {
    fc.assert(
      fc.property(fc.constantFrom('max-turns', 'budget', 'approval-timeout-ms'), fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('10x', 'abc', 'soon', '1e3', '-1', '0', '', ' 5', 'none', '3', '0.5', 'NaN', 'Infinity')), (flag, value) => {
        let parsed: ReturnType<typeof inputFromFlags>;
        try {
          parsed = inputFromFlags([`--${flag}`, value]);
        } catch (err) {
          expect((err as Error).message).toContain(`--${flag}`);
          return;
        }
        const v = flag === 'max-turns' ? parsed.input.limits?.maxTurns : flag === 'budget' ? parsed.input.limits?.maxBudgetUsd : parsed.input.approvalTimeoutMs;
        if (value === 'none') expect(v).toBeNull();
        else {
          expect(typeof v).toBe('number');
          expect(Number.isFinite(v) && (v as number) > 0).toBe(true);
          expect(v).toBe(Number(value));
        }
      }),
      params,
    );
  });
});

// --- calls and results

describe('calls and results', () => {
  it('parseCall never throws, and accepts only enabled tools with arguments that fit the schema', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.oneof(fc.string({ maxLength: 40 }), fc.json({ maxDepth: 2 })), fc.subarray(TOOLS), (name, args, enabled) => {
        const r = parseCall({ id: 'c1', type: 'function', function: { name, arguments: args } }, specs(...enabled));
        if (r.ok) {
          expect(enabled).toContain(r.toolName);
          if (r.toolName === 'read_file') expect(typeof r.args.path).toBe('string');
        } else {
          expect(r.error.length).toBeGreaterThan(0);
        }
      }),
      params,
    );
  });

  it('the cache key ignores key order; a capped result never exceeds its cap plus the note', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })), fc.string({ maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (obj, text, max) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(cacheKey('t', reversed)).toBe(cacheKey('t', obj));
        const capped = capToolResult(text, max);
        if (text.length <= max) expect(capped).toBe(text);
        else expect(capped.length).toBeLessThanOrEqual(max + 120);
      }),
      params,
    );
  });
});
