// What every concern of a run reads and writes: its ids, its configuration,
// its state, its trace, its Stop and what it shows (visibility). One object, built once
// per execution in ./agent-run.ts and handed to each concern's module, so a
// concern's code names what it touches instead of reaching into the workflow.
import type { AgentInput, RunConfig } from '../common/contract.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { LoopActivities } from './activity-options.js';
import type { LoopMetrics } from './loop-metrics.js';
import type { ModelCalls, ToolOutage } from './outage-wait.js';
import type { RunState } from './run-state.js';
import type { RunStream } from './run-stream.js';
import type { RunTrace } from './trace.js';
import type { Visibility } from './visibility.js';
import type { Stop } from './stop.js';
import type { SignaturesUsed } from './signatures-used.js';
import type { Notifier } from './notify.js';
import type { ReadAheadResults } from './read-ahead.js';

/** The three ids a run goes by (set by startRun in ./start.ts). */
export interface RunIds {
  /** Names the agent run, stable across continue-as-new and reset: what people and ops tools use. */
  workflowId: string;
  /** Names this run chain's trace file: the first execution's run id, or a reset run's own. */
  chainId: string;
  /** Names the effects of the calls: the first execution's run id, kept by continue-as-new and by reset. */
  effectsChainId: string;
}

export interface RunContext {
  readonly ids: RunIds;
  readonly input: AgentInput;
  readonly cfg: RunConfig;
  readonly state: RunState;
  readonly activities: LoopActivities;
  /** Every model call goes through here: it waits out a provider outage (./outage-wait.ts). */
  readonly modelCalls: ModelCalls;
  /** Every tool activity goes through here: it waits out the outage of what the tool reaches (./outage-wait.ts). */
  readonly toolCalls: ToolOutage;
  readonly metrics: LoopMetrics;
  /** The run's tools as recorded at its start. */
  readonly specs: ToolSpec[];
  readonly trace: RunTrace;
  /** The live stream every trace event is published on. */
  readonly stream: RunStream;
  readonly stop: Stop;
  readonly visibility: Visibility;
  /** Signed steers, raises and reconciliations taken: each is taken once (./signatures-used.ts). */
  readonly signaturesUsed: SignaturesUsed;
  /** Tells the worker's webhooks a run parked on a person (./notify.ts). */
  readonly notify: Notifier;
  /** The reads the last model call ran ahead of the loop (./read-ahead.ts). */
  readonly readAhead: ReadAheadResults;
}
