// The steering queue's rules without Temporal, and a property over any order
// in which messages, model replies, tool results and approvals arrive: a
// message never sits between a tool call and its result, and each one is
// given to the model exactly once (or dropped once, when the run ends first),
// in the order sent. The loop below mirrors AgentRun's use of the queue
// (workflows/agent-run.ts): interrupt checks before a call starts, the wait of
// a parked call, the boundary before each model call, a final answer that a
// due message turns into one more turn.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SteeringQueue, steerInputProblem, steerMessage } from '../../workflows/steering-queue.js';
import { protocolError } from '../../dev/provider/protocol.js';
import type { ChatMessage, ToolCall } from '../../common/contract.js';
import { propertyParams } from '../helpers/property.js';

const params = propertyParams();

describe('steer payloads', () => {
  it.each([
    [null, 'steer takes an object like {"message": "look in logs/", "by": "alice"}'],
    [{}, 'message must be a string, got null'],
    [{ message: 7 }, 'message must be a string, got 7'],
    [{ message: ' \n' }, 'message must not be empty'],
    [{ message: 'x'.repeat(20_001) }, 'message is 20001 characters long; at most 20000'],
    [{ message: 'ok', by: 3 }, 'by must be a string, got 3'],
    [{ message: 'ok', interrupt: 'yes' }, 'interrupt must be true or false, got "yes"'],
  ])('%j is refused: %s', (input, problem) => {
    expect(steerInputProblem(input)).toBe(problem);
  });

  it('a good one is queued with who and when, and shown in the transcript as a user message naming both', () => {
    expect(steerInputProblem({ message: 'look in logs/', by: 'alice', interrupt: false })).toBeNull();
    const q = new SteeringQueue();
    const s = q.receive({ message: 'look in logs/', by: ' alice ' }, 5, '2025-01-02T03:04:05.000Z');
    expect(s).toEqual({ message: 'look in logs/', by: 'alice', at: '2025-01-02T03:04:05.000Z', interrupt: false, task: 5 });
    expect(steerMessage(s)).toEqual({ role: 'user', content: 'Message from alice (sent 2025-01-02T03:04:05.000Z, while you were working): look in logs/' });
  });

  it('is due only from the workflow task after the one it arrived in; carried ones at once', () => {
    const q = new SteeringQueue();
    q.receive({ message: 'a' }, 5, 't');
    expect(q.takeDue(5)).toEqual([]);
    expect(q.takeDue(6).map((s) => s.message)).toEqual(['a']);
    q.receive({ message: 'b', interrupt: true }, 7, 't');
    expect(q.interruptNow(7)).toBeNull();
    expect(q.anyInterrupt()?.message).toBe('b');
    const next = new SteeringQueue(q.carried());
    expect(next.interruptNow(1)?.message).toBe('b');
    expect(next.takeDue(1).map((s) => s.message)).toEqual(['b']);
  });
});

// --- any order of arrivals

/** A steer in a workflow task of its own (newTask), or in the one before it: both happen. */
type Event = { kind: 'steer'; interrupt: boolean; newTask: boolean } | { kind: 'task' } | { kind: 'approve' };
/** A model reply: how many calls, and which of them need an approval. */
type Reply = boolean[];

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('steer' as const), interrupt: fc.boolean(), newTask: fc.boolean() }) },
  { weight: 5, arbitrary: fc.constant({ kind: 'task' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'approve' as const }) },
);
const replyArb: fc.Arbitrary<Reply> = fc.array(fc.boolean(), { maxLength: 3 });

/** What the loop is waiting for. */
type Waiting = { on: 'model' } | { on: 'tool'; call: ToolCall } | { on: 'approval'; call: ToolCall } | { on: 'nothing' };

function simulate(events: Event[], replies: Reply[]) {
  const messages: ChatMessage[] = [{ role: 'user', content: 'task' }];
  const queue = new SteeringQueue();
  const sent: string[] = [];
  const dropped: string[] = [];
  const protocolProblems: string[] = [];
  let task = 1;
  let turn = 0;
  let ended = false;
  let waiting = { on: 'nothing' } as Waiting;
  const needsApproval = new Map<string, boolean>();
  const pending = (): ToolCall | null => {
    const last = [...messages].reverse().find((m) => m.role === 'assistant');
    if (!last || last.role !== 'assistant') return null;
    const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    return (last.tool_calls ?? []).find((c) => !answered.has(c.id)) ?? null;
  };
  const result = (call: ToolCall, content: string) => messages.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content });

  /** Runs the loop until it waits, as one activation would. */
  const advance = () => {
    for (;;) {
      const call = pending();
      if (call) {
        const interrupt = queue.interruptNow(task);
        if (interrupt) {
          result(call, `declined: ${interrupt.message}`);
          continue;
        }
        if (needsApproval.get(call.id)) {
          const any = queue.anyInterrupt();
          if (any) {
            any.acted = true;
            result(call, `rejected: ${any.message}`);
            continue;
          }
          waiting = { on: 'approval', call };
          return;
        }
        waiting = { on: 'tool', call };
        return;
      }
      // The turn boundary, then the model call.
      for (const s of queue.takeDue(task)) messages.push(steerMessage(s));
      const problem = protocolError(messages);
      if (problem) protocolProblems.push(problem);
      waiting = { on: 'model' };
      return;
    }
  };
  const end = () => {
    ended = true;
    for (const s of queue.takeAll()) dropped.push(s.message);
  };

  advance();
  for (const e of events) {
    if (ended) break;
    if (e.kind === 'steer') {
      if (e.newTask) task += 1;
      const message = `m${sent.length}`;
      sent.push(message);
      queue.receive({ message, interrupt: e.interrupt }, task, 't');
      // Signals wake a parked call's wait within their own activation.
      if (waiting.on === 'approval' && queue.anyInterrupt()) advance();
      continue;
    }
    task += 1;
    if (e.kind === 'approve') {
      if (waiting.on !== 'approval') continue;
      result(waiting.call, 'approved and done');
      advance();
      continue;
    }
    if (waiting.on === 'tool') {
      result(waiting.call, 'done');
      advance();
    } else if (waiting.on === 'model') {
      const reply = replies[turn % Math.max(1, replies.length)] ?? [];
      turn += 1;
      const calls: ToolCall[] = reply.map((approval, i) => {
        const id = `t${turn}_${i}`;
        needsApproval.set(id, approval);
        return { id, type: 'function', function: { name: approval ? 'delete_file' : 'read_file', arguments: '{}' } };
      });
      messages.push({ role: 'assistant', content: calls.length ? null : 'answer', ...(calls.length ? { tool_calls: calls } : {}) });
      if (calls.length === 0 && !queue.hasDue(task)) end();
      else advance();
    }
  }
  if (!ended) end();
  return { messages, sent, dropped, protocolProblems };
}

describe('steering, under any order of arrivals', () => {
  it('a message never sits between a call and its result; each is given once or dropped once, in the order sent', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), fc.array(replyArb, { minLength: 1, maxLength: 6 }), (events, replies) => {
        const { messages, sent, dropped, protocolProblems } = simulate(events, replies);
        expect(protocolProblems).toEqual([]);
        const given = messages.flatMap((m) => (m.role === 'user' && m.content.startsWith('Message from ') ? [m.content.replace(/^.*: /, '')] : []));
        expect([...given, ...dropped]).toEqual(sent);
        // Right after a reply's last result, or after an answer: never inside a reply's calls.
        messages.forEach((m, i) => {
          if (m.role !== 'user' || i === 0) return;
          const prev = messages[i - 1];
          expect(prev.role === 'tool' || prev.role === 'user' || (prev.role === 'assistant' && !prev.tool_calls?.length)).toBe(true);
        });
      }),
      params,
    );
  });
});
