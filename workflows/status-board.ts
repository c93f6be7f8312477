// What a run shows of itself: its status (running, parked on something, or
// how it ended) for the `status` query, the Web UI's details panel and the
// Agent* search attributes. Parking and unparking go through here, so the
// three always agree.
import { definitionView, type DefinitionView } from '../common/definition.js';
import * as wf from '@temporalio/workflow';
import { agentStatusOf, type Interruption, type ModelOutageView, type OutageKind, type RunConfig, type ToolOutageView, type RunStatus, type RunStatusView, type SteerView } from '../common/contract.js';
import { configQuery, statusQuery, transcriptQuery } from '../common/run-messages.js';
import type { Exit } from './exits.js';
import { noChildren, type RunState } from './run-state.js';
import type { Patches } from './patches.js';
import { attributesToUpsert, detailsText, statusAttributes, type VisibleState } from './visibility.js';

/** What the board shows: the run's ids, configuration and state; its patches decide what an upsert carries. */
export interface BoardSource {
  ids: { workflowId: string };
  cfg: RunConfig;
  state: RunState;
  patches: Pick<Patches, 'pendingArgsHash' | 'all'>;
}

/** What other concerns add to the view: queued steering messages, a hard budget's figures, a fork's origin. */
export interface BoardExtras {
  queuedSteers(): SteerView[];
  budgetFields(): Pick<RunStatusView, 'budget' | 'usageOverReservation'>;
}

export class StatusBoard {
  private status: RunStatus = 'running';
  private interruption: Interruption | null = null;
  /** How the run ended, once it has. */
  private ended: Exit | null = null;
  /** A model call waiting out a provider outage, or a tool call waiting out its own, while it waits. */
  private outage: { kind: 'model'; view: ModelOutageView } | { kind: 'tool'; view: ToolOutageView } | null = null;
  private extras: BoardExtras = { queuedSteers: () => [], budgetFields: () => ({}) };

  /** Computed once per execution: the configuration it hashes does not change. */
  readonly definition: DefinitionView;

  constructor(private readonly ctx: BoardSource) {
    this.definition = definitionView(ctx.cfg);
  }

  /** Set once the concerns that add to the view exist. */
  attach(extras: BoardExtras): void {
    this.extras = extras;
  }

  register(): void {
    wf.setHandler(statusQuery, () => this.view());
    wf.setHandler(transcriptQuery, () => this.ctx.state.messages);
    wf.setHandler(configQuery, () => this.ctx.cfg);
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
    this.upsert();
  }

  /** No longer parked. */
  unpark(): void {
    this.status = 'running';
    this.interruption = null;
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
    const all = statusAttributes(this.visible(), exit, info.parent?.workflowId, this.ctx.patches.pendingArgsHash);
    const pairs = attributesToUpsert(all, info.typedSearchAttributes, this.ctx.patches.all);
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
      turns: state.turns,
      costUsd: state.costUsd,
      toolRuns: state.toolRuns,
      usage: { ...state.usage },
      usageEstimatedTurns: state.usageEstimatedTurns ?? 0,
      children: state.children ?? noChildren(),
      queuedSteers: this.extras.queuedSteers(),
      ...this.extras.budgetFields(),
      ...(ctx.cfg.forkFrom ? { forkedFrom: ctx.cfg.forkFrom } : {}),
      ...this.definition,
      ...(this.outage?.kind === 'model' && !exit ? { modelOutage: { ...this.outage.view } } : {}),
      ...(this.outage?.kind === 'tool' && !exit ? { toolOutage: { ...this.outage.view } } : {}),
    };
  }

  private visible(): VisibleState {
    return { cfg: this.ctx.cfg, state: this.ctx.state, status: this.status, interruption: this.interruption, queuedSteers: this.extras.queuedSteers().length, outage: this.ended ? null : this.outage };
  }
}
