// How the CLI prints a run: one line per step, a live line for tool progress,
// and a one-line summary at the end.
import type { TraceLine } from '../node/trace-format.js';
import type { RunResult } from '../common/contract.js';
import { SUGGESTED_RAISE_CALLS, suggestedRaiseUsd } from '../common/budget-math.js';

const usd = (n: unknown) => `$${Number(n).toFixed(6)}`;

/**
 * Where the printed hints' commands go: the Temporal server and namespace in
 * use. The hints are commands to paste where the CLI runs, a team's own
 * project included: `npx agent-harness …` (the package's bin), and `temporal
 * …` (the Temporal CLI on the PATH) with `--address` / `--namespace` when they
 * are not the Temporal CLI's defaults (pasted without them, it would target
 * whatever listens on localhost:7233).
 */
export interface HintTarget {
  /** host:port of the Temporal server the run is on. */
  address: string;
  namespace: string;
}

let hintTarget: HintTarget | null = null;

/** The server and namespace the CLI uses (set once it has read its configuration). */
export function setHintTarget(target: HintTarget | null): void {
  hintTarget = target;
}

/** The command that runs this CLI in any project that has the package. */
export const CLI_HINT = 'npx agent-harness';

/** The Temporal CLI's own defaults: no flag needed for them. */
const TEMPORAL_DEFAULT_ADDRESSES = new Set(['localhost:7233', '127.0.0.1:7233']);

/** `temporal`, with the address and namespace in use when they are not its defaults. */
export function temporalHint(target: HintTarget | null = hintTarget): string {
  const address = target?.address ?? process.env.TEMPORAL_ADDRESS;
  const namespace = target?.namespace ?? process.env.TEMPORAL_NAMESPACE;
  return [
    'temporal',
    ...(address && !TEMPORAL_DEFAULT_ADDRESSES.has(address) ? [`--address ${address}`] : []),
    ...(namespace && namespace !== 'default' ? [`--namespace ${namespace}`] : []),
  ].join(' ');
}

/** A fork's source on its first line: where its inherited turns came from and what they cost there. */
function forkNote(f: unknown): string {
  if (typeof f !== 'object' || f === null) return '';
  const o = f as { run?: unknown; atTurn?: unknown; inheritedCostUsd?: unknown; fromFile?: unknown };
  const cost = typeof o.inheritedCostUsd === 'number' ? ` (${usd(o.inheritedCostUsd)} there)` : '';
  return ` forked from ${String(o.run ?? 'a file')}${o.fromFile ? ' (export file)' : ''} at turn ${String(o.atTurn)}${cost}`;
}

export function renderEvent(l: TraceLine, workflowId: string): string | null {
  switch (l.type) {
    case 'run_started':
      return `run ${workflowId} started: model=${String(l.model)} maxTurns=${String(l.maxTurns)} maxBudgetUsd=${String(l.maxBudgetUsd)}${forkNote(l.forkedFrom)}${definitionNote(l)}`;
    case 'turn':
      // The first turn names the model the worker really sent (LLM_MODEL overrides the run's).
      return `turn ${String(l.turn)}: in=${String(l.prompt_tokens)} out=${String(l.completion_tokens)} cost=${usd(l.costUsd)} finish=${String(l.finish)}${l.turn === 1 && l.model ? ` model=${String(l.model)}` : ''}`;
    case 'model_error':
      return `  ! model call attempt ${String(l.attempt)} failed: ${String(l.errorType)}: ${String(l.message).slice(0, 200)}${l.retryable ? ' (Temporal retries it)' : ' (not retried)'}`;
    case 'model_retry':
      return `  ↻ model call attempt ${String(l.attempt)}`;
    // A run waiting out an outage says so (the status shows waiting_for_model / waiting_for_tool), rather than nothing for hours.
    case 'model_waiting':
    case 'tool_waiting':
      return `  ⏳ waiting out ${l.type === 'model_waiting' ? 'a model provider' : `the tool ${String(l.toolName)} (call ${String(l.callId)})`} outage: ${String(l.tries)} tr${l.tries === 1 ? 'y' : 'ies'} failed, last ${String(l.errorType)}: ${clip(String(l.error), 200)}; next try at ${String(l.nextTryAt)}, gives up at ${String(l.giveUpAt)}`;
    case 'model_recovered':
    case 'tool_recovered':
      return `  ✔ ${l.type === 'model_recovered' ? 'model provider' : `tool ${String(l.toolName)}`} back after ${Math.round(Number(l.waitedMs) / 1000)} s (${String(l.tries)} tries)`;
    case 'tool_start':
      return `  → ${String(l.toolName)} ${JSON.stringify(l.args)} (call ${String(l.callId)})`;
    case 'tool_progress':
      return `    … ${String(l.label)}`;
    case 'tool_result':
      if (l.refused) return `  ✗ ${String(l.toolName)} refused (call ${String(l.callId)}): ${clip(String(l.refused), 200)}`;
      if (l.notRun) return `  ✗ ${String(l.toolName)} not run (call ${String(l.callId)}): ${String(l.notRun)}`;
      return `  ← ${String(l.toolName)} ${l.ok ? 'ok' : l.declined ? 'declined' : 'error'}${l.cached ? ' (cached, not run)' : ''} ${String(l.ms)} ms`;
    case 'approval_required':
      return [
        `  ⏸ approval required: ${String(l.toolName)} ${JSON.stringify(l.args)} (call ${String(l.callId)})${l.argsHash ? ` argsHash ${String(l.argsHash)}` : ''}`,
        `    approve: ${CLI_HINT} approve ${workflowId} ${String(l.callId)}${l.argsHash ? ` --args-hash ${String(l.argsHash)}` : ''}`,
        `    reject:  ${CLI_HINT} reject ${workflowId} ${String(l.callId)} --reason "…"`,
        `    or:      ${temporalHint()} workflow signal -w ${workflowId} --name approve --input '${JSON.stringify({ callId: l.callId, by: 'you' })}'`,
      ].join('\n');
    case 'approval_decided':
      // "approve" + "d" read well; "reject" + "d" did not: each decision has its own word and mark.
      return `  ${l.decision === 'reject' ? '✘ rejected' : l.decision === 'approve' ? '✔ approved' : `✔ ${String(l.decision)}`} by ${String(l.by ?? 'someone')}${l.interrupt ? ' (interrupted by a message)' : ''}${l.reason ? `: ${String(l.reason)}` : ''}`;
    case 'steer_queued':
      return `  ✉ message from ${String(l.by ?? 'the user')} queued${l.interrupt ? ' (interrupt)' : ''}: ${clip(String(l.message))}`;
    case 'steered':
      return `  ✉ message from ${String(l.by ?? 'the user')} given to the model after turn ${String(l.turn)}: ${clip(String(l.message))}`;
    case 'steer_dropped':
      return `  ✉ message from ${String(l.by ?? 'the user')} not given to the model: ${String(l.reason)}`;
    case 'reconciliation_required':
      return [
        `  ⏸ outcome unknown, a person must say what happened: ${String(l.toolName)} (call ${String(l.callId)}): ${clip(String(l.known), 200)}`,
        `    it happened: ${CLI_HINT} reconcile ${workflowId} ${String(l.callId)} --happened "what happened"`,
        `    try again:   ${CLI_HINT} reconcile ${workflowId} ${String(l.callId)} --retry`,
      ].join('\n');
    case 'reconciliation_decided':
      return `  ✔ reconciled (${String(l.outcome)})${l.by ? ` by ${String(l.by)}` : ''}`;
    case 'signal_ignored':
      return `  (ignored ${String(l.signal)} signal: ${String(l.reason)})`;
    case 'model_request':
      return renderRequest(l);
    case 'context_elided':
      return `  ✂ context: ${String(l.elided)} old tool results elided, ${String(l.droppedTurns)} old turns dropped (~${String(l.estimatedTokensBefore)} → ~${String(l.estimatedTokensAfter)} of ${String(l.windowTokens)} tokens)`;
    case 'context_summarized':
      return `  ✂ context: the ${String(l.turns)} earliest turns summarized for ${usd(l.summaryCostUsd)} (~${String(l.estimatedTokensBefore)} → ~${String(l.estimatedTokensAfter)} of ${String(l.windowTokens)} tokens)`;
    case 'effect':
      return renderEffect(l);
    case 'budget_awaited':
      return [
        `  ⏸ awaiting budget: the next model call needs ${usd(l.needUsd)} at worst (${String(l.promptTokens)} prompt tokens, a ${String(l.minReplyTokens)}-token reply); budget ${usd(l.maxBudgetUsd)}, spent ${usd(l.costUsd)}`,
        // needBudgetUsd pays for this call only (the run would park again a turn later): suggest room for a few more.
        `    raise: ${CLI_HINT} raise-budget ${workflowId} --to ${String(suggestedRaiseUsd({ needBudgetUsd: Number(l.needBudgetUsd), needUsd: Number(l.needUsd) }))} --reason "…"` +
          `   (room for ${SUGGESTED_RAISE_CALLS} calls like this one; at least ${usd(l.needBudgetUsd)} pays for this one only)`,
      ].join('\n');
    case 'budget_raised':
      return `  ✔ budget raised ${usd(l.fromUsd)} → ${usd(l.toUsd)} by ${String(l.by)}${l.reason ? `: ${String(l.reason)}` : ''}`;
    case 'budget_exhausted':
      return `  ■ budget exhausted: its parent ${String(l.parent)} holds this run's budget`;
    case 'usage_over_reservation':
      return `  ! the provider reported ${String(l.completionTokens)} completion tokens for max_tokens ${String(l.maxTokens)}: charged ${usd(l.reservedUsd)} (its hold), not ${usd(l.reportedUsd)}; the run stops`;
    case 'output_invalid':
      return `  ✗ answer missed the output schema (miss ${String(l.misses)}, ${String(l.maxOutputRetries)} retries allowed): ${clip(String(l.problem), 200)}`;
    case 'stop_prevailed':
      return `  ■ the Stop came first: the run's ${String(l.over)} (${clip(String(l.overReason))}) is not its result`;
    case 'run_stopped':
      return `stopped: ${String(l.status)} (${String(l.reason)})`;
    default:
      return null;
  }
}

/** What the effect ledger decided for a write, when a person should know (docs/effects.md). */
function renderEffect(l: TraceLine): string | null {
  const h = l.holder as { runId?: string; attempt?: number; worker?: string } | undefined;
  const call = `${String(l.toolName)} (call ${String(l.callId)})`;
  switch (l.verdict) {
    case 'unknown':
      return `  ⚠ ${call}: outcome unknown${h ? `: attempt ${String(h.attempt)} on ${String(h.worker)} started it and did not report` : `: ${String(l.reason)}`}; not done again`;
    case 'earlier_run':
      return `  ↺ ${call}: already done by run ${String(h?.runId)}; not done again`;
    case 'late':
      return `  ⚠ ${call}: acted after another attempt had declared its outcome unknown; the ledger now holds its result`;
    default:
      return null;
  }
}

const clip = (s: string, n = 100) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** `run --debug`: the request about to be sent, messages numbered. */
function renderRequest(l: TraceLine): string {
  const messages = (l.messages ?? []) as { n: number; role: string; content?: string | null; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
  const lines = [`  ┌ request ${String(l.model)}: tools=${((l.tools ?? []) as string[]).join(',')}, ${messages.length} messages`];
  for (const m of messages) {
    const calls = (m.tool_calls ?? []).map((c) => `→ ${c.function.name} ${c.function.arguments} [${c.id}]`).join('; ');
    const who = m.role === 'tool' ? `tool[${m.tool_call_id}]` : m.role;
    lines.push(`  │ ${m.n} ${who}: ${clip([m.content ?? '', calls].filter(Boolean).join(' ').replace(/\n/g, ' '))}`);
  }
  return lines.join('\n');
}

/** One line: status, turns, tool runs, cost and time, for people and for grep. */
export function summaryLine(r: RunResult, ms: number): string {
  return `turns=${r.turns} tools=${r.toolRuns} in=${r.usage.promptTokens} out=${r.usage.completionTokens} cost=${usd(r.costUsd)} ms=${ms} status=${r.status}`;
}

/** A resumed or forked run's second start line: whether its definition moved since its source (common/definition.ts). */
function definitionNote(l: TraceLine): string {
  if (!Array.isArray(l.definitionChanged)) return '';
  const changed = l.definitionChanged.map(String);
  return `\n  definition ${changed.length ? `changed since its source: ${changed.join(', ')}` : "as its source's"} (source ${String(l.sourceDefinitionHash).slice(0, 12)}, now ${String(l.definitionHash).slice(0, 12)})`;
}
