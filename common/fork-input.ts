// Validates `forkFrom` (see common/fork.ts). Pure, like ./input: the workflow
// checks it before loading the source, parseInput checks it again so the CLI
// and `run --input` refuse the same inputs.
import type { ChatMessage } from './contract.js';
import type { ForkRequest } from './contract.js';
import { InputError } from './input-error.js';

const FORK_FIELDS = ['run', 'runId', 'atTurn', 'message', 'transcript', 'turnCostsUsd'];
const ROLES = ['system', 'user', 'assistant', 'tool'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The input's `forkFrom`, checked; null when absent. Throws InputError naming the field. */
export function parseForkFrom(raw: Obj): ForkRequest | null {
  const f = raw.forkFrom;
  if (f === undefined || f === null) return null;
  if (!isObj(f)) throw new InputError('forkFrom', 'must be an object like {"run": "<workflow id>", "atTurn": 7}');
  for (const key of Object.keys(f)) {
    if (!FORK_FIELDS.includes(key)) throw new InputError(`forkFrom.${key}`, `is not a known field (known: ${FORK_FIELDS.join(', ')})`);
  }
  if (raw.resumeFrom !== undefined && raw.resumeFrom !== null) {
    throw new InputError('forkFrom', 'and resumeFrom cannot be used together: a fork starts a new line from a turn, a resume continues a stopped run');
  }
  const { atTurn } = f;
  if (typeof atTurn !== 'number' || !Number.isInteger(atTurn) || atTurn < 0) {
    throw new InputError('forkFrom.atTurn', `must be an integer >= 0 (the turns to keep), got ${JSON.stringify(atTurn)}`);
  }
  const req: ForkRequest = { atTurn };
  for (const key of ['run', 'runId', 'message'] as const) {
    const v = f[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '') throw new InputError(`forkFrom.${key}`, `must be a non-empty string, got ${JSON.stringify(v)}`);
    req[key] = v;
  }
  if (f.transcript !== undefined) req.transcript = transcriptOf(f.transcript);
  if (f.turnCostsUsd !== undefined) {
    if (!Array.isArray(f.turnCostsUsd) || !f.turnCostsUsd.every((c) => typeof c === 'number' && Number.isFinite(c) && c >= 0)) {
      throw new InputError('forkFrom.turnCostsUsd', 'must be an array of numbers >= 0');
    }
    req.turnCostsUsd = f.turnCostsUsd as number[];
  }
  if (req.run === undefined && req.transcript === undefined) throw new InputError('forkFrom', 'needs "run" (the source\'s workflow id) or "transcript" (an exported run\'s messages)');
  if (req.runId !== undefined && req.transcript !== undefined) throw new InputError('forkFrom.runId', 'names an execution to load, but "transcript" is given: use one or the other');
  return req;
}

/** Messages in the chat wire format: the roles and fields the model call sends. */
function transcriptOf(v: unknown): ChatMessage[] {
  if (!Array.isArray(v) || v.length === 0) throw new InputError('forkFrom.transcript', 'must be a non-empty array of chat messages');
  v.forEach((m: unknown, i) => {
    const at = `forkFrom.transcript[${i}]`;
    if (!isObj(m) || typeof m.role !== 'string' || !ROLES.includes(m.role)) throw new InputError(at, `must be a message with a role among ${ROLES.join(', ')}`);
    if (m.role === 'tool' && (typeof m.tool_call_id !== 'string' || typeof m.content !== 'string')) throw new InputError(at, 'is a tool message without tool_call_id and content');
    if (m.role === 'assistant') {
      if (m.content !== null && typeof m.content !== 'string') throw new InputError(`${at}.content`, 'must be a string or null');
      if (m.tool_calls !== undefined && !(Array.isArray(m.tool_calls) && m.tool_calls.every((c) => isObj(c) && typeof c.id === 'string' && isObj(c.function) && typeof c.function.name === 'string' && typeof c.function.arguments === 'string'))) {
        throw new InputError(`${at}.tool_calls`, 'must be tool calls like {"id", "type": "function", "function": {"name", "arguments"}}');
      }
    }
    if ((m.role === 'system' || m.role === 'user') && typeof m.content !== 'string') throw new InputError(`${at}.content`, 'must be a string');
  });
  return v as ChatMessage[];
}
