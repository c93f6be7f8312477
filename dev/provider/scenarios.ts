// The scripts of the scripted provider. Each is a pure function of what the
// request carries: the turn index (number of assistant messages so far), the
// text every tool returned so far, and the tool names offered (and, for a
// scenario that wants them, the whole messages, tools and settings). No state lives
// in the server, so a run can be killed and resumed against it.
import type { ScriptedModel } from '../../common/scripted-models.js';
import type { RequestSettings, SeenMessage, SeenTool } from './requests.js';

/** What a scenario sees of a request. */
export interface ScriptInput {
  /** The number of assistant messages so far (0 on a run's first call). */
  turn: number;
  /** The text of every tool result so far, joined. */
  toolText: string;
  /** The names of the tools the request offers. */
  toolNames: string[];
  /** The first user message. */
  task: string;
  /** The system prompt the request carried (null when none): a steer or the worker's default reaches it here. */
  system: string | null;
  /** The whole conversation in chat-completions shape, the system prompt first (both protocols: see {@link SeenMessage}). */
  messages: SeenMessage[];
  /** The tool definitions offered: name, description, JSON Schema. */
  tools: SeenTool[];
  /** The model settings the request carried (temperature, max tokens, tool choice, response format, …). */
  settings: RequestSettings;
}

/** One tool call a scenario makes. */
export interface ScriptedCall {
  /** The call id (`c1`): the one approvals name. */
  id: string;
  /** The tool's name. */
  name: string;
  /** Its arguments, sent as JSON. */
  args: Record<string, unknown>;
}

/** A scenario's reply: a final answer, or tool calls (parsed or raw), with optional provider quirks. */
export type ScriptedReply = (
  | { type: 'answer'; content: string }
  /** `content`: text said beside the calls, as agents narrate what they do next. */
  | { type: 'calls'; calls: ScriptedCall[]; content?: string }
  /** Arguments sent verbatim, for replies whose JSON is broken on purpose. */
  | { type: 'raw_calls'; calls: { id: string; name: string; arguments: string }[]; content?: string }
) & {
  /**
   * The reply's usage lies: it reports more completion tokens than the
   * request's max_tokens allowed (a provider fault a hard budget must catch).
   */
  overbill?: true;
  /**
   * The provider's prompt cache, as it reports it: this many of the prompt's
   * tokens read from it and written to it (each at most what is left of the
   * prompt). The scripted provider has no cache; a scenario that says so
   * lets a test check the price of cached tokens.
   */
  cache?: { read: number; write: number };
};

const call = (id: string, name: string, args: Record<string, unknown> = {}): ScriptedReply => ({
  type: 'calls',
  calls: [{ id, name, args }],
});
const answer = (content: string): ScriptedReply => ({ type: 'answer', content });
/** After one bad turn, say what the tool answered, so tests can read what the model was told. */
const thenReport = (first: ScriptedReply) => ({ turn, toolText }: ScriptInput): ScriptedReply =>
  turn === 0 ? first : answer(`The tool said: ${toolText}`);

const plan = ({ turn }: ScriptInput): ScriptedReply =>
  turn === 0
    ? call('c1', 'list_files')
    : turn === 1
      ? call('c2', 'read_file', { path: 'errors.log' })
      : answer('errors.log mentions a timeout: worker 7 timed out after 30000 ms.');

/**
 * Follows the script the task carries after `script:` — a JSON list of turns,
 * each a list of calls `{"name": ..., "args": {...}}` or a string, the
 * reply's text (an answer) — then answers with the last tool result. For
 * tools a deployment brings: a test or a demo writes the calls and answers it
 * wants without a scenario of its own. Call ids are `s<turn>_<i>`, or the
 * call's own `"id"` (a provider that reuses ids, say).
 */
const script = ({ turn, toolText, task }: ScriptInput): ScriptedReply => {
  const at = task.indexOf('script:');
  let turns: unknown = [];
  try {
    turns = at < 0 ? [] : JSON.parse(task.slice(at + 'script:'.length));
  } catch {
    return answer('The script in the task is not valid JSON.');
  }
  const steps = Array.isArray(turns) ? turns : [];
  const step: unknown = steps[turn];
  if (typeof step === 'string') return answer(step);
  if (!Array.isArray(step)) return answer(`Done. The last tool said: ${toolText.split('\n').pop() ?? ''}`);
  return {
    type: 'calls',
    calls: step.map((c: { id?: unknown; name?: unknown; args?: unknown }, i) => ({
      id: typeof c.id === 'string' ? c.id : `s${turn}_${i}`,
      name: String(c.name),
      args: typeof c.args === 'object' && c.args !== null ? (c.args as Record<string, unknown>) : {},
    })),
  };
};

export const SCENARIOS: Record<ScriptedModel, (input: ScriptInput) => ScriptedReply> = {
  plan,
  script,

  // Never declares itself done.
  runaway: ({ turn }) => call(`c${turn}`, 'list_files'),

  // Like runaway, but each reply says a sentence before its call, as agents
  // often do: what the live stream's tokens cost per turn (bench/stream.ts).
  narrated: ({ turn }) => ({ ...call(`c${turn}`, 'list_files'), content: `Turn ${turn + 1}: I will list the files again to see whether anything changed since the last look.` }),

  // Like runaway, but each turn reads three things at once, as agents often
  // do: the bill benchmark's run whose turns make several read-only calls.
  runaway_wide: ({ turn }) => ({
    type: 'calls',
    calls: [
      { id: `c${turn}a`, name: 'list_files', args: {} },
      { id: `c${turn}b`, name: 'read_file', args: { path: 'errors.log' } },
      { id: `c${turn}c`, name: 'read_file', args: { path: 'notes.txt' } },
    ],
  }),

  // Follows plan, but its second reply's usage reports more completion
  // tokens than the request's max_tokens allowed.
  overbill: (input) => (input.turn === 1 ? { ...plan(input), overbill: true } : plan(input)),

  // Like runaway, but each turn reads one of 20 pages (page0.txt … page19.txt),
  // so the transcript grows by a whole page per turn: the long-run benchmark.
  bulky: ({ turn }) => call(`c${turn}`, 'read_file', { path: `page${turn % 20}.txt` }),

  // Guesses a file name, then corrects itself only if told what went wrong.
  recover: ({ turn, toolText }) => {
    if (turn === 0) return call('c1', 'read_file', { path: 'timeout.log' });
    if (!/Call list_files/.test(toolText)) return answer('I could not read the file, so I do not know.');
    if (turn === 1) return call('c2', 'list_files');
    if (turn === 2) return call('c3', 'read_file', { path: 'errors.log' });
    return answer('errors.log mentions a timeout.');
  },

  // Keeps asking for a file the workspace's access policy never lets it read.
  forbidden: ({ turn }) => call(`c${turn + 1}`, 'read_file', { path: '.env' }),

  // Like plan, but reads errors.log twice in consecutive turns.
  duplicate: ({ turn }) =>
    turn === 0
      ? call('c1', 'list_files')
      : turn === 1
        ? call('c2', 'read_file', { path: 'errors.log' })
        : turn === 2
          ? call('c3', 'read_file', { path: 'errors.log' })
          : answer('errors.log mentions a timeout: worker 7 timed out after 30000 ms.'),

  // Deletes a file nobody asked it to delete; its answer depends on what the
  // transcript says happened to that call.
  destructive: ({ turn, toolText }) =>
    turn === 0
      ? call('c1', 'list_files')
      : turn === 1
        ? call('c2', 'delete_file', { path: 'access.log' })
        : /declined|rejected/i.test(toolText)
          ? answer('I did not delete anything: you declined the deletion.')
          : answer('Deleted access.log to free space.'),

  // Two intended deletes with the same arguments in consecutive turns.
  destructive_twice: ({ turn }) =>
    turn === 0
      ? call('c1', 'delete_file', { path: 'access.log' })
      : turn === 1
        ? call('c2', 'delete_file', { path: 'access.log' })
        : answer('Deleted access.log.'),

  // Lists, deletes (a write: parked on approval), lists again, and answers
  // with what the second listing says: a listing served from a cache filled
  // before the delete would still name the file.
  list_delete_list: ({ turn, messages }) =>
    turn === 0
      ? call('c1', 'list_files')
      : turn === 1
        ? call('c2', 'delete_file', { path: 'access.log' })
        : turn === 2
          ? call('c3', 'list_files')
          : answer(/access\.log/.test(messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '') ? 'access.log is still listed.' : 'access.log is gone from the listing.'),

  // A provider that names every turn's call `call_0` (as some OpenAI-compatible
  // servers do): two deletions, each put to a person, then the last tool text.
  same_call_id: ({ turn, toolText }) =>
    turn === 0
      ? call('call_0', 'delete_file', { path: 'access.log' })
      : turn === 1
        ? call('call_0', 'delete_file', { path: 'notes.txt' })
        : answer(`Done. ${toolText.split('\n').slice(-2).join(' | ')}`),

  slow: ({ turn, toolText }) =>
    turn === 0 ? call('c1', 'scan_archive') : answer(`The scan finished: ${toolText.split('\n').pop() ?? ''}`),

  // Drives an MCP server's tools (test/mcp/fs-server.ts), whatever prefix the
  // worker gives them: lists, writes a file (not read-only: it parks for
  // approval), then starts a slow job meant to be stopped mid-call.
  mcp: ({ turn, toolNames, toolText }) => {
    const tool = (mcpName: string) => toolNames.find((n) => n.endsWith(`_${mcpName}`)) ?? `no_${mcpName}_offered`;
    if (turn === 0) return call('c1', tool('list'));
    if (turn === 1) return call('c2', tool('write'), { path: 'out/report.txt', content: 'written through MCP' });
    if (turn === 2) return call('c3', tool('slow'), { steps: 600, stepMs: 100 });
    return answer(`MCP done: ${toolText.split('\n').pop() ?? ''}`);
  },

  // The parent delegates to a sub-agent; the child (offered no `research`
  // tool) follows `plan`.
  research: (input) => {
    if (!input.toolNames.includes('research')) return plan(input);
    if (input.turn === 0) return call('r1', 'research', { question: 'Which file mentions a timeout, and what does it say?' });
    return answer(`From research: ${input.toolText.split('\n').pop() ?? ''}`);
  },

  // A tree of runs for the hard budget's property: the task `tree:c0t6o,c1t2 P`
  // makes the parent start one research sub-agent per item, side by side
  // (question "c0t6o": list files 6 turns, the last reply's usage a lie
  // when "o"), then answer — or, with " P", send one more call whose usage lies.
  tree: ({ turn, task, toolNames }) => {
    if (!toolNames.includes('research')) {
      const [, turns = '0', lie = ''] = /t(\d+)(o?)/.exec(task) ?? [];
      if (turn >= Number(turns) + (lie ? 1 : 0)) return answer(`Listed ${turns} times.`);
      const step = call(`c${turn}`, 'list_files');
      return lie && turn === Number(turns) ? { ...step, overbill: true } : step;
    }
    const items = (/tree:(\S+)/.exec(task)?.[1] ?? 'c0t1').split(',');
    if (turn === 0) return { type: 'calls', calls: items.map((q, i) => ({ id: `r${i}`, name: 'research', args: { question: q } })) };
    if (turn === 1 && / P\b/.test(task)) return { ...call('p1', 'list_files'), overbill: true };
    return answer('Delegated.');
  },

  // Reads the path given in the task as `path=<...>`, then reports what came back.
  read: ({ turn, toolText, task }) =>
    turn === 0
      ? call('c1', 'read_file', { path: /path=(\S+)/u.exec(task)?.[1] ?? 'errors.log' })
      : answer(`The tool said: ${toolText}`),

  // Bad model output, one kind per scenario: the harness must answer each
  // with a tool result the model can act on, never a crash or a hang.
  bad_json_args: thenReport({ type: 'raw_calls', calls: [{ id: 'c1', name: 'read_file', arguments: '{"path": "errors.log"' }] }),
  unknown_tool: thenReport(call('c1', 'rm_rf', { path: '/' })),
  bad_schema: thenReport(call('c1', 'read_file', { path: 42, mode: 'fast' })),
  // Slash-separated, so the byte-pair encoder stays linear on it (one 200 kB word would not).
  huge_args: thenReport(call('c1', 'read_file', { path: 'very/long/path/'.repeat(14_000) })),
  three_calls: ({ turn, toolText }) =>
    turn === 0
      ? {
          type: 'calls',
          calls: [
            { id: 'c1', name: 'list_files', args: {} },
            { id: 'c2', name: 'read_file', args: { path: 'errors.log' } },
            { id: 'c3', name: 'read_file', args: { path: 'notes.txt' } },
          ],
        }
      : answer(`Read three results: ${toolText.split('\n').length} lines.`),
  empty_reply: () => answer(''),
  // Arguments that fail the schema of a tool that needs approval, and of the
  // sub-agent tool: refused before anyone is asked, before any child starts.
  delete_bad_args: thenReport(call('c1', 'delete_file', { path: 42 })),
  research_bad_args: thenReport(call('r1', 'research', {})),

  // The parent delegates; the child (no `research` tool) runs away until its
  // own turn cap stops it, and the parent carries on with what it got.
  research_runaway: (input) => {
    if (!input.toolNames.includes('research')) return call(`c${input.turn}`, 'list_files');
    if (input.turn === 0) return call('r1', 'research', { question: 'List the files until you are sure.' });
    return answer(`Research did not finish: ${input.toolText.split('\n').pop() ?? ''}`);
  },
  // The same with a team's own sub-agent tool, `delegate` (a sub-agent with
  // limits of its own, test/budget-strategy.test.ts): the child runs away
  // until its own limit stops it.
  delegate_runaway: (input) => {
    if (!input.toolNames.includes('delegate')) return call(`c${input.turn}`, 'list_files');
    if (input.turn === 0) return call('d1', 'delegate', { question: 'List the files until you are sure.' });
    return answer(`Delegate did not finish: ${input.toolText.split('\n').pop() ?? ''}`);
  },

  // The two protocol breaks of the loop chapter, as replies the harness must
  // refuse to record: a call no result can be linked to (empty id), and two
  // calls sharing one id (one of them would be left without a result).
  missing_call: ({ turn }) =>
    turn === 0 ? { type: 'calls', calls: [{ id: '', name: 'list_files', args: {} }] } : answer('done'),
  missing_result: ({ turn }) =>
    turn === 0
      ? {
          type: 'calls',
          calls: [
            { id: 'c1', name: 'list_files', args: {} },
            { id: 'c1', name: 'read_file', args: { path: 'errors.log' } },
          ],
        }
      : answer('done'),

  // What the model sizes that nothing bounded (test/attacks/model-output.test.ts):
  // a 5,001-character call id (it reached a search attribute: the server
  // terminated the run), a 1,101-character one on `research` (it reached the
  // child's workflow id), an id with control characters, and arguments nested
  // 5,000 deep in 10 KB for a tool whose schema takes any value (`keep_value`,
  // the test's own tool).
  long_call_id: thenReport(call('c'.repeat(5001), 'list_files')),
  research_long_id: (input) => {
    if (!input.toolNames.includes('research')) return plan(input);
    return input.turn === 0 ? call('r'.repeat(1101), 'research', { question: 'Which file mentions a timeout?' }) : answer(`From research: ${input.toolText.split('\n').pop() ?? ''}`);
  },
  control_call_id: thenReport(call('c1\u0007\r\nINJECTED', 'list_files')),
  deep_args: thenReport({ type: 'raw_calls', calls: [{ id: 'c1', name: 'keep_value', arguments: `{"value":${'['.repeat(5000)}${']'.repeat(5000)}}` }] }),
  // A model that reuses call id c2 for a second deletion of the same file, in
  // the next turn (test/attacks/decisions.test.ts): a decision on the first
  // must never decide the second.
  reused_call_id: ({ turn, toolText }) =>
    turn <= 1 ? call('c2', 'delete_file', { path: 'access.log' }) : answer(`Done. ${toolText.split('\n').slice(-2).join(' | ')}`),

  // Structured output (input outputSchema; docs/structured-output.md's schema:
  // {file: string, timeoutMs: integer}, both required). Its first answer is
  // JSON that misses `timeoutMs`; told so, it answers valid JSON in a
  // ```json fence: a run that needs one retry.
  structured: ({ turn }) =>
    turn === 0 ? answer('{"file": "errors.log"}') : answer('```json\n{"file": "errors.log", "timeoutMs": 30000}\n```'),
  // Never valid: `file` is a number every time (the run ends failed, InvalidOutput).
  structured_never: () => answer('{"file": 7, "timeoutMs": 30000}'),
  // A final answer of 1 MiB of JSON: over the harness's bound on a structured answer.
  huge_json: () => answer(JSON.stringify({ file: 'errors.log', data: 'x '.repeat(512 * 1024) })),
};
