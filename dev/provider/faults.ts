// Fault injection for tests: a rule queue the test fills through the control
// endpoint (POST /_control/faults). A rule matches a request by model, turn
// and/or a marker in the first user message, fires `times` times, and is gone.
// The harness never sees any of this: it just gets a 429, a reset or a slow reply.

export type Fault =
  | { type: 'status'; status: number; message?: string; retryAfterSec?: number }
  | { type: 'malformed' }
  | { type: 'reset' }
  | { type: 'delay'; ms: number }
  /** A normal reply without its `usage` field, as some OpenAI-compatible servers send. */
  | { type: 'no_usage' };

export interface FaultMatch {
  model?: string;
  turn?: number;
  taskIncludes?: string;
}

export interface FaultRule {
  match: FaultMatch;
  fault: Fault;
  times: number;
}

export interface RequestFacts {
  model: string;
  turn: number;
  task: string;
}

export class FaultQueue {
  private rules: FaultRule[] = [];

  add(rule: FaultRule): void {
    this.rules.push({ ...rule, times: rule.times > 0 ? rule.times : 1 });
  }

  clear(): void {
    this.rules = [];
  }

  /** Takes one firing of the first rule that matches, if any. */
  take(req: RequestFacts): Fault | null {
    const rule = this.rules.find((r) => matches(r.match, req));
    if (!rule) return null;
    rule.times -= 1;
    if (rule.times <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return rule.fault;
  }
}

function matches(m: FaultMatch, req: RequestFacts): boolean {
  return (
    (m.model === undefined || m.model === req.model) &&
    (m.turn === undefined || m.turn === req.turn) &&
    (m.taskIncludes === undefined || req.task.includes(m.taskIncludes))
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
    ['status', 'malformed', 'reset', 'delay', 'no_usage'].includes(String(f.type)) &&
    (r.times === undefined || typeof r.times === 'number')
  );
}
