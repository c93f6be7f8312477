// What a run shows of itself: its status (running, parked on something, or
// how it ended) for the `status` query, the Web UI's details panel and the
// Agent* search attributes. Parking and unparking go through here, so the
// three always agree.
//
// What ops see of a live run without asking it anything: the search
// attributes they filter on (`temporal workflow list --query
// 'AgentStatus="awaiting_approval"'`) and the Web UI's details panel.
import type { SearchAttributePair, SearchAttributeUpdatePair, TypedSearchAttributes } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { SUGGESTED_RAISE_CALLS, suggestedRaiseUsd } from '../common/budget-math.js';
import {
  agentStatusOf,
  type AgentInput,
  type Interruption,
  type ModelOutageView,
  type OutageKind,
  type RunConfig,
  type RunStatus,
  type RunStatusView,
  type SteerView,
  type ToolOutageView,
} from '../common/contract.js';
import { boundedKeyword, boundedText } from '../common/bounds.js';
import { definitionView, type DefinitionView } from '../common/definition.js';
import {
  AGENT_AWAITING_CALL,
  AGENT_AWAITING_EXPIRES_AT,
  AGENT_AWAITING_SINCE,
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
import type { Exit } from './exits.js';
import type { RunState } from './run-state.js';

export interface VisibleState {
  cfg: RunConfig;
  state: RunState;
  status: RunStatus;
  interruption: Interruption | null;
  /** Steering messages waiting for the next turn boundary. */
  queuedSteers?: number;
  /** A model call waiting out a provider outage, or a tool call waiting out its own. */
  outage?: { kind: 'model'; view: ModelOutageView } | { kind: 'tool'; view: ToolOutageView } | null;
  /** While parked on a person: since when (workflow time, ms) and when the wait times out (null: never). */
  parked?: { sinceMs: number; expiresAtMs: number | null } | null;
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
  // Whose run it is, for ops: the caller's runContext, cut like the task (it may be 8 KiB).
  const runContext = cfg.runContext !== undefined ? `\n\n**Run context:** \`${noMath(JSON.stringify(cfg.runContext).slice(0, 300)).replace(/`/g, "'")}\`` : '';
  return `${head}${steers}\n\n**Task:** ${noMath(cfg.task.slice(0, 300))}${runContext}\n\n${turns} · ${cost} · **Model:** ${cfg.model}${modelLine(cfg, state)}${definition}`;
}

/** The run's model settings and output schema, for the details panel: values as given, providerOptions by provider name only (their content may be long). */
function modelLine(cfg: VisibleState['cfg'], state: VisibleState['state']): string {
  const s = cfg.modelSettings;
  const settings = s
    ? Object.entries(s)
        .map(([k, v]) => (k === 'providerOptions' ? `providerOptions: ${Object.keys(v as object).join(', ')}` : `${k} ${JSON.stringify(v)}`))
        .join(' · ')
    : '';
  const output = cfg.outputSchema ? `**Output:** JSON per the run's outputSchema (misses ${state.outputMisses ?? 0} of ${cfg.maxOutputRetries ?? 0} retries)` : '';
  return [settings ? `**Model settings:** ${noMath(settings.slice(0, 500))}` : '', output].filter(Boolean).map((l) => `\n\n${l}`).join('');
}

const noMath = (text: string): string => text.replace(/\$/g, '\\$');


/**
 * The Agent* search attributes. A run parked on a person is live, so its
 * AgentStatus is `awaiting_approval`, never an exit's name; the exit's reason
 * and a failure's type are set once, when it ends.
 */
export function statusAttributes(v: VisibleState, exit: Exit | undefined, parent: string | undefined): SearchAttributeUpdatePair[] {
  const awaiting = (v.interruption?.type === 'approval' || v.interruption?.type === 'reconciliation') && !exit ? v.interruption : null;
  // Every string the model or a caller chose is bounded (common/bounds.ts):
  // a value over the server's 2 KiB gets the run TERMINATED, with no exit
  // and no run_stopped line. Values that fit are upserted as they are.
  const keyword = (value: string | null | undefined): string | null => (typeof value === 'string' ? boundedKeyword(value) : null);
  return [
    { key: AGENT_STATUS, value: agentStatusOf(exit?.status ?? v.status, v.interruption, exit !== undefined, v.outage?.kind ?? null) },
    { key: AGENT_MODEL, value: boundedKeyword(v.cfg.model) },
    { key: AGENT_TURNS, value: v.state.turns },
    { key: AGENT_COST_USD, value: v.state.costUsd },
    { key: AGENT_AWAITING_TOOL, value: awaiting ? keyword(awaiting.toolName) : null },
    { key: AGENT_AWAITING_CALL, value: awaiting ? keyword(awaiting.callId) : null },
    { key: AGENT_PENDING_ARGS_HASH, value: awaiting?.type === 'approval' ? keyword(awaiting.argsHash) : null },
    // Every park on a person (a budget's too), for the ops server's inbox: its age and time left without a worker.
    { key: AGENT_AWAITING_SINCE, value: v.parked && v.interruption && !exit ? new Date(v.parked.sinceMs) : null },
    { key: AGENT_AWAITING_EXPIRES_AT, value: v.parked && v.interruption && !exit && v.parked.expiresAtMs !== null ? new Date(v.parked.expiresAtMs) : null },
    ...(exit ? [{ key: AGENT_EXIT_REASON, value: searchableText(v.cfg.payloadsEncrypted === true ? sealedReason(exit) : exit.reason) }] : []),
    ...(exit?.status === 'failed' ? [{ key: AGENT_ERROR_TYPE, value: boundedKeyword(exit.errorType) }] : []),
    ...(parent ? [{ key: AGENT_PARENT, value: boundedKeyword(parent) }] : []),
    // Only forks set it: other runs leave it unset rather than upsert an empty value.
    ...(v.cfg.forkFrom?.run ? [{ key: AGENT_FORK_OF, value: boundedKeyword(v.cfg.forkFrom.run) }] : []),
  ];
}

/**
 * The exit reason shown in AgentExitReason when payloads are encrypted:
 * search attributes are not (the server indexes them), and a reason may quote
 * a tool's error or the model's words. It names the exit and the error type
 * only; the reason itself stays in the encrypted result, status and trace.
 */
export function sealedReason(exit: Exit): string {
  const what = exit.status === 'failed' ? `failed (${exit.errorType})` : exit.interruption ? `${exit.status} (${exit.interruption.type})` : exit.status;
  return `${what}, the reason is in the encrypted result`;
}

/**
 * What an upsert must carry: only the attributes whose value differs from
 * what the run shows already (set at its start, carried by continue-as-new,
 * or upserted before). Empty: no upsert at all. Each upsert is a billed
 * Action and a visibility write; values the run started with are neither.
 */
export function attributesToUpsert(all: SearchAttributeUpdatePair[], shown: TypedSearchAttributes): SearchAttributeUpdatePair[] {
  // Dates compare by their time (two Date objects are never ===).
  const same = (a: unknown, b: unknown) => (a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b);
  return all.filter((p) => !same(shown.get(p.key) ?? null, p.value ?? null));
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
    ...(typeof input.model === 'string' && input.model !== '' ? [{ key: AGENT_MODEL, value: boundedKeyword(input.model) }] : []),
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
  // Cut by bytes, not characters: 1,000 characters of CJK or emoji are 3,000 to 4,000 bytes, past the server's 2 KiB.
  return boundedText(text.replace(/[:'\\]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 1000));
}

/** What the run shows: the run's ids, configuration and state. */
export interface VisibilitySource {
  /** effectsChainId: the first execution's run id, which names the run chain in runKey. */
  ids: { workflowId: string; effectsChainId: string };
  cfg: RunConfig;
  state: RunState;
}

/** What other concerns add to the view: queued steering messages, a hard budget's figures, a fork's origin. */
export interface VisibilityExtras {
  queuedSteers(): SteerView[];
  budgetFields(): Pick<RunStatusView, 'budget' | 'usageOverReservation'>;
}

/** The run's status, details panel and search attributes, kept in agreement: every park and unpark goes through here. */
export class Visibility {
  private status: RunStatus = 'running';
  private interruption: Interruption | null = null;
  /** How the run ended, once it has. */
  private ended: Exit | null = null;
  /** A model call waiting out a provider outage, or a tool call waiting out its own, while it waits. */
  private outage: { kind: 'model'; view: ModelOutageView } | { kind: 'tool'; view: ToolOutageView } | null = null;
  private extras: VisibilityExtras = { queuedSteers: () => [], budgetFields: () => ({}) };
  /** While parked on a person: since when, and when the wait times out (search attributes AgentAwaitingSince / AgentAwaitingExpiresAt). */
  private parked: { sinceMs: number; expiresAtMs: number | null } | null = null;

  /** Computed once per execution: the configuration it hashes does not change. */
  readonly definition: DefinitionView;

  constructor(private readonly ctx: VisibilitySource) {
    this.definition = definitionView(ctx.cfg);
  }

  /** Set once the concerns that add to the view exist. */
  attach(extras: VisibilityExtras): void {
    this.extras = extras;
  }


  /** Running or parked: a Stop can still take it. */
  isLive(): boolean {
    return this.status === 'running' || this.status === 'interrupted';
  }

  get exit(): Exit | null {
    return this.ended;
  }

  /** Parked on a decision, a budget raise or a reconciliation. */
  park(interruption: Interruption): void {
    this.status = 'interrupted';
    this.interruption = interruption;
    // The wait each park starts (workflows/approvals.ts, reconcile.ts: approvalTimeoutMs; budget.ts: budgetTimeoutMs), from now.
    const timeout = interruption.type === 'budget' ? (this.ctx.cfg.hardBudget?.budgetTimeoutMs ?? null) : this.ctx.cfg.approvalTimeoutMs;
    const now = Date.now();
    this.parked = { sinceMs: now, expiresAtMs: timeout === null ? null : now + timeout };
    this.upsert();
  }

  /** No longer parked. */
  unpark(): void {
    this.status = 'running';
    this.interruption = null;
    this.parked = null;
    this.upsert();
  }

  /**
   * A model or tool call waits out an outage (`view`), or no longer does
   * (null). AgentStatus changes on entering and leaving only (an upsert
   * each); the tries in between show in the query and the details panel,
   * which cost nothing.
   */
  waitingOut(kind: OutageKind, view: ModelOutageView | ToolOutageView | null): void {
    const changed = (view === null) !== (this.outage === null);
    if (view === null) this.outage = null;
    else if (kind === 'tool' && 'toolName' in view) this.outage = { kind, view };
    else this.outage = { kind: 'model', view };
    if (changed) this.upsert();
    else this.showDetails();
  }

  /** The run has ended: the status says how (the search attributes follow with `upsert(exit)`). */
  end(exit: Exit): void {
    this.ended = exit;
    this.status = exit.status;
    this.interruption = exit.interruption;
  }

  /**
   * At most one upsert per status change (start, parked, resumed, finished),
   * never per turn, carrying only what changed: each is a command in history
   * and a billed Action. A run whose client set its starting attributes
   * upserts nothing at its start.
   */
  upsert(exit?: Exit): void {
    this.showDetails();
    const info = wf.workflowInfo();
    const all = statusAttributes(this.visible(), exit, info.parent?.workflowId);
    const pairs = attributesToUpsert(all, info.typedSearchAttributes);
    if (pairs.length > 0) wf.upsertSearchAttributes(pairs);
  }

  /** The run's live state for the Web UI's details panel (not a command: free to update every turn). */
  showDetails(): void {
    wf.setCurrentDetails(detailsText(this.visible()));
  }

  view(): RunStatusView {
    const { ctx, ended: exit } = this;
    const { state } = ctx;
    return {
      runId: ctx.ids.workflowId,
      workflowId: ctx.ids.workflowId,
      status: this.status,
      agentStatus: agentStatusOf(this.status, this.interruption, exit !== null, this.outage?.kind ?? null),
      reason: exit?.reason ?? null,
      errorType: exit?.status === 'failed' ? exit.errorType : null,
      interruption: this.interruption,
      // What a signed steer or raiseBudget binds (workflows/refusals.ts runKeyOf: the same text).
      runKey: `${ctx.ids.workflowId}@${ctx.ids.effectsChainId}`,
      turns: state.turns,
      costUsd: state.costUsd,
      toolRuns: state.toolRuns,
      usage: { ...state.usage },
      usageEstimatedTurns: state.usageEstimatedTurns,
      children: state.children,
      queuedSteers: this.extras.queuedSteers(),
      ...this.extras.budgetFields(),
      ...(ctx.cfg.forkFrom ? { forkedFrom: ctx.cfg.forkFrom } : {}),
      // For ops (whose run is it?); the model never sees it.
      ...(ctx.cfg.runContext !== undefined ? { runContext: ctx.cfg.runContext } : {}),
      ...this.definition,
      ...(ctx.cfg.modelSettings ? { modelSettings: ctx.cfg.modelSettings } : {}),
      ...(ctx.cfg.outputSchema ? { outputMisses: state.outputMisses ?? 0 } : {}),
      ...(this.outage?.kind === 'model' && !exit ? { modelOutage: { ...this.outage.view } } : {}),
      ...(this.outage?.kind === 'tool' && !exit ? { toolOutage: { ...this.outage.view } } : {}),
    };
  }

  private visible(): VisibleState {
    return { cfg: this.ctx.cfg, state: this.ctx.state, status: this.status, interruption: this.interruption, queuedSteers: this.extras.queuedSteers().length, outage: this.ended ? null : this.outage, parked: this.parked };
  }
}
