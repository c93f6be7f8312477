// What ops see of a live run without asking it anything: the search
// attributes they filter on (`temporal workflow list --query
// 'AgentStatus="awaiting_approval"'`) and the Web UI's details panel.
import type { SearchAttributePair, SearchAttributeUpdatePair, TypedSearchAttributes } from '@temporalio/common';
import { agentStatusOf, type AgentInput, type Interruption, type ModelOutageView, type RunConfig, type RunStatus, type ToolOutageView } from '../common/contract.js';
import type { Exit } from './exits.js';
import { SUGGESTED_RAISE_CALLS, suggestedRaiseUsd } from '../common/budget-math.js';
import type { RunState } from './run-state.js';
import {
  AGENT_AWAITING_CALL,
  AGENT_AWAITING_TOOL,
  AGENT_COST_USD,
  AGENT_ERROR_TYPE,
  AGENT_FORK_OF,
  AGENT_EXIT_REASON,
  AGENT_MODEL,
  AGENT_PARENT,
  AGENT_PENDING_ARGS_HASH,
  AGENT_STATUS,
  AGENT_TURNS,
} from '../common/search-attributes.js';

export interface VisibleState {
  cfg: RunConfig;
  state: RunState;
  status: RunStatus;
  interruption: Interruption | null;
  /** Steering messages waiting for the next turn boundary. */
  queuedSteers?: number;
  /** A model call waiting out a provider outage, or a tool call waiting out its own. */
  outage?: { kind: 'model'; view: ModelOutageView } | { kind: 'tool'; view: ToolOutageView } | null;
}

/**
 * The details panel, in markdown: what the run waits for, its task, turns, cost and model.
 * Dollar signs are escaped: the Web UI's markdown reads `$…$` as math and
 * would turn `$0.05 of $1` into a formula.
 */
export function detailsText({ cfg, state, status, interruption: i, queuedSteers, outage }: VisibleState): string {
  const o = outage?.view;
  const waitingFor = outage?.kind === 'tool' ? `the tool \`${outage.view.toolName}\` (call ${outage.view.callId})` : 'the model provider';
  const hash = i?.type === 'approval' && i.argsHash ? ` · **argsHash:** \`${i.argsHash}\`` : '';
  const head =
    i?.type === 'approval'
      ? `**awaiting approval:** \`${i.toolName} ${JSON.stringify(i.args)}\` (call ${i.callId})${hash}`
      : i?.type === 'budget'
        ? `**awaiting budget:** the next model call needs \\$${i.needUsd.toFixed(6)} at worst; raise the budget to at least \\$${i.needBudgetUsd} (now \\$${i.maxBudgetUsd}, \\$${i.shortUsd} short), or to \\$${suggestedRaiseUsd(i)} for room for ${SUGGESTED_RAISE_CALLS} calls like it`
        : i?.type === 'reconciliation'
          ? `**awaiting reconciliation:** \`${i.toolName} ${JSON.stringify(i.args)}\` (call ${i.callId}) — ${noMath(i.known.slice(0, 300))}`
          : o
            ? `**waiting for ${waitingFor}** since ${o.since}: ${noMath(o.lastError.slice(0, 300))} (${o.errorType}) · **next try:** ${o.nextTryAt} · **gives up:** ${o.giveUpAt}`
            : `**${status}**`;
  const steers = queuedSteers ? `\n\n**Steering:** ${queuedSteers} message${queuedSteers > 1 ? 's' : ''} queued for the next turn` : '';
  const turns = `**Turns:** ${state.turns}${cfg.maxTurns !== null ? ` of ${cfg.maxTurns}` : ''}`;
  const cost = `**Cost:** \\$${state.costUsd.toFixed(6)}${cfg.maxBudgetUsd !== null ? ` of \\$${cfg.maxBudgetUsd}` : ''}`;
  // A resumed or forked run says whether its definition moved since the run it continues.
  const moved = cfg.definitionFrom?.changed ?? [];
  const definition = cfg.definitionFrom ? `\n\n**Definition:** ${moved.length ? `changed since its source: ${moved.join(', ')}` : 'as its source\'s'} (source \`${cfg.definitionFrom.hash.slice(0, 12)}\`)` : '';
  return `${head}${steers}\n\n**Task:** ${noMath(cfg.task.slice(0, 300))}\n\n${turns} · ${cost} · **Model:** ${cfg.model}${definition}`;
}

const noMath = (text: string): string => text.replace(/\$/g, '\\$');


/**
 * The Agent* search attributes. A run parked on a person is live, so its
 * AgentStatus is `awaiting_approval`, never an exit's name; the exit's reason
 * and a failure's type are set once, when it ends. `argsHash`:
 * patched(pending-args-hash-v1) — AgentPendingArgsHash joins the upsert; runs
 * recorded before it upsert without it.
 */
export function statusAttributes(v: VisibleState, exit: Exit | undefined, parent: string | undefined, argsHash = false): SearchAttributeUpdatePair[] {
  const awaiting = (v.interruption?.type === 'approval' || v.interruption?.type === 'reconciliation') && !exit ? v.interruption : null;
  return [
    { key: AGENT_STATUS, value: agentStatusOf(exit?.status ?? v.status, v.interruption, exit !== undefined, v.outage?.kind ?? null) },
    { key: AGENT_MODEL, value: v.cfg.model },
    { key: AGENT_TURNS, value: v.state.turns },
    { key: AGENT_COST_USD, value: v.state.costUsd },
    { key: AGENT_AWAITING_TOOL, value: awaiting ? awaiting.toolName : null },
    { key: AGENT_AWAITING_CALL, value: awaiting ? awaiting.callId : null },
    ...(argsHash ? [{ key: AGENT_PENDING_ARGS_HASH, value: awaiting?.type === 'approval' ? (awaiting.argsHash ?? null) : null }] : []),
    ...(exit ? [{ key: AGENT_EXIT_REASON, value: searchableText(exit.reason) }] : []),
    ...(exit?.status === 'failed' ? [{ key: AGENT_ERROR_TYPE, value: exit.errorType }] : []),
    ...(parent ? [{ key: AGENT_PARENT, value: parent }] : []),
    // Only forks set it: runs recorded before forks never upsert it.
    ...(v.cfg.forkFrom?.run ? [{ key: AGENT_FORK_OF, value: v.cfg.forkFrom.run }] : []),
  ];
}

/**
 * What an upsert must carry: every attribute (histories recorded before
 * ALL_PATCHES upserted them all), or only those whose value differs from what
 * the run shows already (set at its start, carried by continue-as-new, or
 * upserted before). Empty: no upsert at all. Each upsert is a billed Action
 * and a visibility write; values the run started with are neither.
 */
export function attributesToUpsert(all: SearchAttributeUpdatePair[], shown: TypedSearchAttributes, onlyChanged: boolean): SearchAttributeUpdatePair[] {
  if (!onlyChanged) return all;
  return all.filter((p) => (shown.get(p.key) ?? null) !== (p.value ?? null));
}

/**
 * The attributes a client sets when it starts a run (free: no upsert, no
 * Action), so the run need not upsert them itself: it is `running`, at turn
 * 0, and on the model its input names. A run started without them (`temporal
 * workflow start`) upserts them in its first workflow task.
 */
export function startingAttributes(input: AgentInput): SearchAttributePair[] {
  return [
    { key: AGENT_STATUS, value: 'running' },
    { key: AGENT_TURNS, value: 0 },
    { key: AGENT_COST_USD, value: 0 },
    ...(typeof input.model === 'string' && input.model !== '' ? [{ key: AGENT_MODEL, value: input.model }] : []),
  ];
}

/**
 * A Text search attribute's value, safe for every visibility store. Temporal's
 * PostgreSQL visibility casts Text values with a raw `::tsvector`, which
 * rejects ':' and unbalanced quotes ("syntax error in tsvector") and with it
 * the whole row: the run would stay RUNNING in `workflow list`
 * (temporalio/temporal PR #11085). The reason keeps its words.
 */
export function searchableText(text: string): string {
  return text.replace(/[:'\\]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 1000);
}
