// Fault injection for tests: a rule queue the test fills through the control
// endpoint (POST /_control/faults). A rule matches a request by model, turn
// and/or a marker in the first user message, fires `times` times, and is gone;
// a `down` rule instead answers every matching request for `forMs` from when
// it was added (an outage: each request reset, or answered `status`), then goes.
// The harness never sees any of this: it just gets a 429, a reset or a slow reply.
// Every fault applies to both protocols (chat completions and Anthropic
// Messages, errors in each one's shape) and to streamed replies.

import type { ScriptedReply } from './scenarios.js';

/** What a matched request gets instead of its scenario's reply. `status`: that HTTP status (`retryAfterSec` sent as Retry-After); `reset`: the connection dropped; `delay`: the reply `ms` late; `down`: every matching request refused for `forMs` (reset, or answered `status`). */
export type Fault =
  | { type: 'status'; status: number; message?: string; retryAfterSec?: number }
  /**
   * The model says this instead of its scenario's reply: whatever a test (the
   * attack suite's properties) wants a hostile model to send, call ids,
   * argument text and content verbatim, through the normal answer path (both
   * protocols, streamed or not, usage counted).
   */
  | { type: 'reply'; reply: ScriptedReply }
  /**
   * A body that is not JSON; in a stream, `afterParts` good events (default
   * 2) then one event whose data is not JSON, and the stream ends there.
   */
  | { type: 'malformed'; afterParts?: number }
  /**
   * A reply that ends early: a stream closes cleanly after `afterParts`
   * events (default 2), without its finish (no message_stop, no [DONE]); a
   * body stops half-way through its promised content-length, the connection closed.
   */
  | { type: 'truncated'; afterParts?: number }
  | { type: 'reset' }
  | { type: 'delay'; ms: number }
  | { type: 'down'; forMs: number; status?: number }
  /** A normal reply without its `usage` (every usage field of an Anthropic reply or stream), as some OpenAI-compatible servers send. */
  | { type: 'no_usage' }
  /**
   * A model whose own tokenizer counts more than o200k_base: the reply reports
   * ceil(prompt × factor) + overheadTokens prompt tokens (as a provider bills
   * a prompt its tokenizer splits finer, plus a template or tool-use system
   * prompt it adds).
   */
  | { type: 'tokenizer'; factor: number; overheadTokens?: number };

/** Which requests a fault hits: every field given must match; none given matches every request. */
export interface FaultMatch {
  /** The request's `model` (the scenario name). */
  model?: string;
  /** The turn index: the number of assistant messages in the request (0 for a run's first call). */
  turn?: number;
  /** A marker in the first user message (the run's task): put one in a test's task to hit that run only. */
  taskIncludes?: string;
  /** Only requests of this protocol: `chat` (POST /v1/chat/completions) or `anthropic` (POST /v1/messages). */
  protocol?: 'chat' | 'anthropic';
  /** Only streamed (true) or only unstreamed (false) requests. */
  stream?: boolean;
}

/** A fault and the requests it hits, queued with `addFault`. */
export interface FaultRule {
  /** Which requests. */
  match: FaultMatch;
  /** What they get. */
  fault: Fault;
  /** How many matching requests it hits before it is gone (at least 1); a `down` fault lasts `forMs` instead. */
  times: number;
  /** A `down` rule's end (epoch ms), set when it is added. */
  until?: number;
}

/** What the provider knows of a request, matched against a {@link FaultMatch}. */
export interface RequestFacts {
  /** The request's `model`. */
  model: string;
  /** The number of assistant messages in it. */
  turn: number;
  /** Its first user message. */
  task: string;
  /** `chat` (POST /v1/chat/completions) or `anthropic` (POST /v1/messages). */
  protocol: 'chat' | 'anthropic';
  /** It asked for a streamed reply. */
  stream: boolean;
}

export class FaultQueue {
  private rules: FaultRule[] = [];

  add(rule: FaultRule): void {
    const until = rule.fault.type === 'down' ? Date.now() + rule.fault.forMs : undefined;
    this.rules.push({ ...rule, times: rule.times > 0 ? rule.times : 1, ...(until !== undefined ? { until } : {}) });
  }

  /** Every rule, or those whose match names this marker: an outage ends when the test says. */
  clear(taskIncludes?: string | null): void {
    this.rules = taskIncludes ? this.rules.filter((r) => r.match.taskIncludes !== taskIncludes) : [];
  }

  /** Takes one firing of the first rule that matches, if any. */
  take(req: RequestFacts): Fault | null {
    const now = Date.now();
    this.rules = this.rules.filter((r) => r.until === undefined || r.until > now);
    const rule = this.rules.find((r) => matches(r.match, req));
    if (!rule) return null;
    // An outage lasts its time, however many requests it refuses.
    if (rule.until !== undefined) return rule.fault;
    rule.times -= 1;
    if (rule.times <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return rule.fault;
  }
}

function matches(m: FaultMatch, req: RequestFacts): boolean {
  return (
    (m.model === undefined || m.model === req.model) &&
    (m.turn === undefined || m.turn === req.turn) &&
    (m.taskIncludes === undefined || req.task.includes(m.taskIncludes)) &&
    (m.protocol === undefined || m.protocol === req.protocol) &&
    (m.stream === undefined || m.stream === req.stream)
  );
}

export function isFaultRule(v: unknown): v is FaultRule {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Partial<FaultRule>;
  const f = r.fault as Partial<Fault> | undefined;
  return (
    typeof r.match === 'object' &&
    r.match !== null &&
    typeof f === 'object' &&
    f !== null &&
    ['status', 'malformed', 'truncated', 'reset', 'delay', 'no_usage', 'down', 'tokenizer', 'reply'].includes(String(f.type)) &&
    (f.type !== 'reply' || isScriptedReply((f as { reply?: unknown }).reply)) &&
    (f.type !== 'tokenizer' || (typeof (f as { factor?: unknown }).factor === 'number' && (f as { factor: number }).factor > 0)) &&
    (f.type !== 'down' || (typeof (f as { forMs?: unknown }).forMs === 'number' && (f as { forMs: number }).forMs > 0)) &&
    (r.times === undefined || typeof r.times === 'number')
  );
}

/** A reply a `reply` fault may carry: an answer's text, or calls whose ids, names and argument text are strings (anything else the wire cannot carry as chat completions does). */
function isScriptedReply(v: unknown): v is ScriptedReply {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { type?: unknown; content?: unknown; calls?: unknown };
  if (r.content !== undefined && typeof r.content !== 'string') return false;
  if (r.type === 'answer') return typeof r.content === 'string';
  if (r.type !== 'calls' && r.type !== 'raw_calls') return false;
  if (!Array.isArray(r.calls)) return false;
  return r.calls.every((c: unknown) => {
    if (typeof c !== 'object' || c === null) return false;
    const call = c as { id?: unknown; name?: unknown; arguments?: unknown; args?: unknown };
    const body = r.type === 'raw_calls' ? typeof call.arguments === 'string' : typeof call.args === 'object' && call.args !== null;
    return typeof call.id === 'string' && typeof call.name === 'string' && body;
  });
}
