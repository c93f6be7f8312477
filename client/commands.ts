// The CLI's commands, each with its own usage: `<command> --help` prints its
// entry, `help` prints them all with the exit codes.

export interface CommandHelp {
  /** The synopsis, after `agent-harness `; continuation lines are indented. */
  usage: string;
  /** What it does, when the synopsis does not say. */
  about?: string;
}

export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  run: {
    usage:
      'run [--task T] [--model M] [--max-turns N|none] [--budget USD|none] [--budget-mode soft|hard] [--tool-errors describe|generic|fatal]\n' +
      '    [--dedupe readOnly|off|all] [--tools a,b] [--workspace NAME] [--approval-timeout-ms MS|none] [--id WORKFLOW_ID]\n' +
      '    [--input JSON] [--detach] [--debug]',
    about:
      'start a run and follow it to its end (--detach: print its workflow id and return; --debug: print each model request).\n' +
      'Flags and --input are checked before the run starts: a bad value is a usage error naming the flag; --tools too when the\n' +
      'queue\'s workers offer the built-in tools (otherwise the run\'s first step checks them, and --detach waits for it).',
  },
  resume: {
    usage: 'resume <workflowId> [--max-turns N|none] [--budget USD|none] [--approval-timeout-ms MS|none] [--id NEW_WORKFLOW_ID] [--detach]',
    about:
      'a new run continuing a stopped one (turn cap, budget, interrupted): its transcript and totals carry on,\n' +
      'pending calls first. The limits count the totals, so a run stopped at its cap needs a higher one\n' +
      '(--max-turns above the turns taken, --budget above the cost spent, or none): without it the resume is refused,\n' +
      'as is one whose flags would leave the run no limit. A run that timed out on an approval waits as long again unless\n' +
      '--approval-timeout-ms says otherwise (the resume says which).',
  },
  fork: {
    usage:
      'fork <workflowId> --at-turn N [--run-id R] [--message TEXT] [--model M] [--max-turns N|none] [--budget USD|none] [--id NEW_WORKFLOW_ID] [--detach]\n' +
      '    | fork --from-file FILE --at-turn N [same options]',
    about:
      'a new run from the first N turns of a run (running, finished, failed, reset: --run-id R names one execution)\n' +
      'or of an export file: their tool results as recorded, no tool or model call of those turns made again.\n' +
      '--message adds a user message after turn N. The turn cap counts the N turns; the cost is the fork\'s own\n' +
      '(the source\'s cost of the N turns is in forkedFrom.inheritedCostUsd). Find a run\'s forks: AgentForkOf="<workflowId>".',
  },
  export: {
    usage: 'export <workflowId> [--run-id R] [--out FILE]',
    about: 'write the run\'s turns, configuration and cost per turn as JSON (stdout without --out), for fork --from-file',
  },
  approve: {
    usage:
      'approve <workflowId> <callId> [--by NAME] [--args-hash H] [--call-key K] [--tool NAME] [--key FILE [--expires-in-ms MS]] [--when-worker-returns]\n' +
      '    | approve --query \'<visibility query>\' [--by NAME] [--key FILE [--expires-in-ms MS]] [--concurrency N]',
    about:
      'with --query, every agentRun parked on an approval that the visibility query matches, each by its own decide update bound to its parked call (signed per run with --key); exit 1 unless all were approved.\n' +
      'with --key (a private key keygen wrote) the decision is signed as --by for AGENT_APPROVERS, valid --expires-in-ms (default 10 min), over the call\'s argsHash, callKey and tool (read from the status; with no worker, give --args-hash, --call-key and --tool).\n' +
      'with --args-hash (the status\'s interruption.argsHash) the approval is refused unless the call has exactly those arguments;\n' +
      'with --call-key (interruption.callKey) unless it is that occurrence of the call (a model may reuse a call id).\n' +
      'With no worker polling the run\'s task queue it is not sent (exit 8); --when-worker-returns records it as the approve signal, applied when a worker takes the run (exit 9).\n' +
      'A worker listed as polling that does not take it within 5 s (one killed a moment ago): recorded as the approve signal, pending (exit 9); one decision applies, never two',
  },
  reject: {
    usage: 'reject <workflowId> <callId> [--reason TEXT] [--by NAME] [--args-hash H] [--call-key K] [--tool NAME] [--key FILE [--expires-in-ms MS]] [--when-worker-returns]',
    about: 'the reason is optional; the model is told it when given. With no worker: as approve (--when-worker-returns sends the reject signal)',
  },
  steer: {
    usage: 'steer <workflowId> <message> [--by NAME] [--interrupt] [--key FILE [--expires-in-ms MS]] [--when-worker-returns]',
    about:
      'queue a message for the run: the model reads it at the next turn boundary (after every call of its last reply has a result).\n' +
      '--interrupt: calls of the current reply that have not started, and a call parked on an approval, are declined with the message as the reason.\n' +
      'With no worker: as approve (--when-worker-returns sends the steer signal)',
  },
  'raise-budget': {
    usage: 'raise-budget <workflowId> --to USD [--by NAME] [--reason TEXT] [--key FILE [--expires-in-ms MS]]',
    about: 'a hard budget\'s new amount (the raiseBudget update): a run parked awaiting_budget goes on; refused unless higher than the budget now',
  },
  reconcile: {
    usage: 'reconcile <workflowId> <callId> (--happened TEXT | --retry) [--by NAME] [--key FILE [--expires-in-ms MS]]',
    about: 'a run parked on a write whose outcome is unknown (unknownOutcomes "ask"): it happened (TEXT is what the model reads), or try it again',
  },
  keygen: {
    usage: 'keygen --out FILE [--name NAME] [--force]',
    about: 'a new Ed25519 key pair for signed decisions: the private key to FILE (mode 600), the public key and an AGENT_APPROVERS snippet to stdout (no server needed)',
  },
  'codec-server': {
    usage: 'codec-server [--port N] [--host H] [--keys-file FILE] [--allow-origin ORIGINS] [--max-body-bytes N]',
    about:
      'serve /decode and /encode for `temporal ... --codec-endpoint URL` and the Web UI (no Temporal server needed), until SIGINT/SIGTERM.\n' +
      'Keys: --keys-file (kid:base64key entries, one a line or comma-separated) or AGENT_PAYLOAD_KEYS; a bearer token when AGENT_CODEC_TOKEN is set;\n' +
      'defaults: --port CODEC_PORT or 8888, --host CODEC_HOST or 127.0.0.1, --allow-origin CODEC_ALLOW_ORIGIN or the dev Web UI, --max-body-bytes 8 MiB',
  },
  ops: {
    usage: 'ops [--port N] [--host H] [--approvers FILE] [--public-url URL]',
    about:
      'serve the inbox page (/) and its JSON API (/api/awaiting, /api/runs/ID, /api/runs/ID/events, /api/runs/ID/decide, /api/decide, /api/audit) until SIGINT/SIGTERM.\n' +
      'AGENT_OPS_TOKEN (required, at least 16 characters) is the bearer token of every /api/ request; decisions are forwarded as the decide update, signed in the browser:\n' +
      'the server holds no approver key. Defaults: --port OPS_PORT or 8790, --host OPS_HOST or 127.0.0.1, --approvers AGENT_APPROVERS (public keys: who may decide),\n' +
      '--public-url OPS_PUBLIC_URL (the origin browsers use, behind a proxy)',
  },
  audit: {
    usage: 'audit [--from T] [--to T] [--format jsonl|csv] [--task-queue Q] [--out FILE]',
    about: 'every decision runs took in the range (read from their histories): workflowId, callId, toolName, argsHash, decision, by, at.\nT: an ISO-8601 time or a duration back from now (30m, 24h, 7d); defaults: the last 24 hours, jsonl, stdout',
  },
  cancel: { usage: 'cancel <workflowId> [--reason TEXT]' },
  status: { usage: 'status <workflowId>', about: 'query the live status; with no worker, one line saying so and what Temporal holds (execution status, search attributes), exit 8' },
  transcript: { usage: 'transcript <workflowId>', about: 'query the messages; with no worker, one line saying so, exit 8' },
  result: { usage: 'result <workflowId>', about: 'wait for the result (exit code = its status)' },
  follow: {
    usage: 'follow <workflowId> [--from OFFSET] [--tokens] [--trace-file]',
    about:
      'print a run\'s events as they happen, from its live stream (through Temporal: from any machine that reaches it), until it ends (exit code = its status).\n' +
      '--from: the stream offset to start at; --tokens: print the model\'s text as it arrives (a terminal shows it anyway); --trace-file: read the trace file under TRACE_DIR instead',
  },
  trace: {
    usage: 'trace <workflowId | FILE.jsonl> [--run-id R] [--follow]',
    about: 'print the JSONL trace of the current run of that workflow id, or of run R (any execution\'s Temporal run id; a workflow id can be used again or reset), or of a trace file',
  },
  list: {
    usage: 'list [--awaiting] [--status S] [--min-cost USD] [--limit N]',
    about:
      'runs as a table, newest first; --awaiting: parked on a person; --status: an AgentStatus (waiting_for_model, waiting_for_tool too)\n' +
      'or terminated / timed_out / cancelled (closed by Temporal from outside: shown so, not as the run\'s last status)',
  },
};

export const EXIT_CODES_HELP =
  'exit codes: completed 0, failed (or refused) 1, usage/connection error 2, max_turns_exceeded 3, budget_exceeded 4, interrupted 5,\n' +
  '  no such run (or no trace for it) 6, run already finished 7, no worker polls: not sent (or a query unanswered) 8,\n' +
  '  recorded, pending: in the run\'s history, applied or refused when a worker takes the run 9';

/** One command's usage, or null for a command that does not exist. */
export function commandUsage(name: string): string | null {
  const c = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!c) return null;
  return `usage: agent-harness ${c.usage}${c.about ? `\n${indent(c.about, 2)}` : ''}`;
}

/** Every command, then `--help` and the exit codes. */
export function fullUsage(): string {
  const lines = ['usage: agent-harness <command> [options]'];
  for (const c of Object.values(COMMANDS)) {
    lines.push(indent(c.usage, 2));
    if (c.about) lines.push(indent(c.about, 6));
  }
  lines.push('  <command> --help         that command\'s usage (no server needed)', EXIT_CODES_HELP);
  return lines.join('\n');
}

function indent(text: string, n: number): string {
  return text.split('\n').map((l) => `${' '.repeat(n)}${l}`).join('\n');
}
