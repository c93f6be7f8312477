// The activities' contract: every activity's name, input and output, as the
// workflow calls them and the worker implements them (activities/index.ts is
// checked against it). The workflow imports this, never the implementations.
import type { AgentInput, ChatMessage, ModelReply, NotifyEvent, RunConfig, RunResult, ToolOutcome, Usage } from './contract.js';
import type { OpenAiToolDefinition } from './tool-spec.js';
import type { StreamTraceEvent } from './stream-items.js';
import type { ModelSettings } from './model-settings.js';
import type { ReplyBudget, ReplyHold, ReplyShortfall } from './budget-math.js';

export interface AgentActivities {
  /** Fills a run's input from this worker's defaults and tools; a local activity, so the answer is in history. */
  resolveConfig(input: unknown): Promise<ResolvedConfig>;
  /**
   * The model activity, one for every run whatever its budget mode: one model
   * call. With `budget` (a hard budget's) it counts the prompt it sends, sends
   * the largest max_tokens the budget pays for, or does not call when not
   * even minReplyTokens fits; without, it simply calls.
   */
  callModel(input: CallModelInput): Promise<ModelAnswer>;
  runTool(input: RunToolInput): Promise<RunToolResult>;
  /** Reads a stopped run for `resumeFrom`. */
  loadRun(args: { workflowId: string }): Promise<LoadedRun>;
  /** Reads a fork's source, whatever its state, cut after turn `atTurn` (common/fork.ts). */
  loadForkSource(args: { run: string; runId?: string; atTurn: number }): Promise<LoadedFork>;
  /**
   * Posts one event of one parking to one of the worker's notification
   * routes (activities/notify.ts); throws on anything but a 2xx, so Temporal
   * retries it until the receiver takes it.
   */
  notifyParked(input: NotifyInput): Promise<NotifyOutcome>;
}

/** One notification: the contract's fields, and which of the worker's routes it goes to. */
export interface NotifyInput {
  /** The index of the route in the worker's `notify.routes` (the run recorded their filters at its start: RunConfig.notify). */
  route: number;
  event: NotifyEvent;
  workflowId: string;
  /** The parked call; null for a budget parking (no call). */
  callId: string | null;
  toolName: string | null;
  argsHash: string | null;
  /** When the wait ends by itself (approvalTimeoutMs / budgetTimeoutMs from the parking), ISO-8601 UTC; null: it waits forever. */
  expiresAt: string | null;
  /** The call's arguments; absent when the run's payloads are encrypted (nothing of an argument leaves in clear). */
  args?: unknown;
  /** Sent as the Idempotency-Key header: the same for every delivery of this event of this parking (made in workflow code). */
  idempotencyKey: string;
  /** When the run parked, ISO-8601 UTC (workflow time). */
  parkedAt: string;
}

/** What a notification's delivery came to: the receiver's 2xx, or no route of that index on this worker. */
export type NotifyOutcome = { delivered: true; status: number } | { delivered: false; reason: string };

/** What an activity input names its run by. */
export interface NamesTheRun {
  /** The workflow id: names the run's trace file, and the run in the Stop registry. */
  workflowId: string;
}

/** A message the store holds, by address. */
export interface MessageRef {
  ref: string;
}
export type WireMessage = ChatMessage | MessageRef;

export interface CallModelInput extends NamesTheRun {
  /** The run chain's first execution run id: names the trace file. */
  chainId: string;
  /** seq of the last trace event before this call; attempt lines hang under it. */
  traceSeq: number;
  model: string;
  /** The last prompt's messages, by the address of their list: this prompt starts with them. */
  prefix?: { ref: string; count: number };
  /** The prompt (after the prefix): messages the store holds by address, the others whole. */
  messages: WireMessage[];
  /** The tool list whole, or its address in the store. */
  tools?: OpenAiToolDefinition[];
  toolsRef?: string;
  /** Write the request to the trace before sending it. */
  debug?: boolean;
  /** The model turn (1-based) this call is for: names its tokens in the live stream. Absent: a summary call, which belongs to no turn. */
  turn?: number;
  /** A hard budget's allowance for this call (workflows/budget.ts); absent under a soft budget, which holds nothing. */
  budget?: ReplyBudget;
  /** The run's modelSettings, sent with a turn's call (not with a summary's). */
  settings?: ModelSettings;
  /** The run's outputSchema, for a turn's call: the provider's native structured-output option, or the prompt (activities/model.ts). */
  responseFormat?: { type: 'json'; schema: Record<string, unknown>; name: string };
  /**
   * Whether a reader of the run's live stream polled recently when the call
   * was sent (workflows/run-stream.ts `watched`). `false`: nobody is
   * watching, so a worker whose tokens go to the live stream publishes none
   * (each batch would be a signal, an Action nobody reads) and answers
   * `heldText`; the workflow then publishes the reply's text whole itself, at
   * no Action. Absent: published as before.
   */
  watched?: boolean;
  /**
   * Read-ahead (workflows/read-ahead.ts): the run's tools this call may run
   * right after the reply, before the workflow sees it. Only tools that are
   * local, read-only and never need approval; only the reply's leading calls
   * of them. The workflow still decides each call as before and uses an
   * outcome only where it would have run that very call as a local activity.
   */
  readAhead?: ReadAheadInput;
}

/** What a model call needs to run the reply's read-only calls as the tool activity would. */
export interface ReadAheadInput {
  tools: string[];
  workspace: string;
  maxResultChars: number;
  runContextKey?: string;
  /** The idempotency key of the reply's first call; the n-th call's ends in `call${firstOccurrence + n}` (workflows/tool-calls.ts). */
  keyPrefix: string;
  firstOccurrence: number;
  /**
   * Present when the run's dedupe cache answers repeated reads of these tools:
   * the digests (common/parse-call.ts cachedDigest) of what it holds. Such a
   * call, and a repeat within the reply, is not read ahead: the cache answers it.
   */
  cached?: string[];
}

/** One call the model activity ran ahead: its position in the reply, its outcome and how long the tool took. */
export interface ReadAheadOutcome {
  callId: string;
  index: number;
  outcome: ToolOutcome;
  ms: number;
}

/**
 * A turn's reply whose text the live stream did not carry as it arrived
 * (nobody was watching): the attempt that said it, so the workflow can
 * publish it whole, as that attempt's `token` and `token_end`.
 */
export interface HeldText {
  attempt: number;
}

/**
 * What a model attempt stopped in the middle of a streamed reply says with its
 * cancellation (the details of its CancelledFailure): the text that had
 * arrived, and our count of what the attempt used.
 */
export interface StoppedReply {
  partialReply: { turn: number; attempt: number; text: string; usage: Usage };
  /** The text was not published as it arrived (nobody watched): the workflow publishes it, ended `stopped`. */
  heldText?: HeldText;
}

export function isStoppedReply(d: unknown): d is StoppedReply {
  const p = (d as { partialReply?: { turn?: unknown; attempt?: unknown; text?: unknown; usage?: { promptTokens?: unknown; completionTokens?: unknown } } } | null)?.partialReply;
  return (
    typeof p?.turn === 'number' &&
    typeof p.attempt === 'number' &&
    typeof p.text === 'string' &&
    typeof p.usage?.promptTokens === 'number' &&
    typeof p.usage.completionTokens === 'number'
  );
}

/**
 * The model activity's answer: called (within its hold when the input carried
 * a budget, else `hold` null), or not called for want of budget (nothing was
 * sent, nothing is owed; only ever with a budget).
 */
export type ModelAnswer = { called: true; reply: ModelReply; hold: ReplyHold | null; heldText?: HeldText; readAhead?: ReadAheadOutcome[] } | { called: false; shortfall: ReplyShortfall };

export interface RunToolInput extends NamesTheRun {
  /** The run chain's first execution run id: names the trace file. */
  chainId: string;
  callId: string;
  idempotencyKey: string;
  toolName: string;
  args: Record<string, unknown>;
  workspace: string;
  /** seq of the tool_start trace line; progress lines hang under it. */
  traceSeq: number;
  /** The result is cut here, so the activity's result payload stays small too. */
  maxResultChars: number;
  /**
   * A person decided that a write whose outcome is unknown should be tried
   * again: the effect protocol claims the call anew and acts (without it, an
   * unknown outcome is reported again, never acted on).
   */
  retryUnknown?: boolean;
  /**
   * The run has a runContext: its key (common/run-context.ts runContextKey),
   * never the object, so history holds the context once per run, not once
   * per call. The worker reads the object from its cache or from the run.
   */
  runContextKey?: string;
  /**
   * Whether a reader was attached when the call was sent (workflows/run-stream.ts
   * `watched`). `false`: the lines the tool writes for the live stream
   * (progress, effect notes) come back with the result (`heldLines`) and the
   * workflow publishes them, at no signal; absent: published as they come.
   */
  watched?: boolean;
}

/** A line the tool activity wrote for the live stream (tool_progress, effect): it carries its call's `step`. */
export type HeldLine = StreamTraceEvent & { step: number };

/**
 * What the tool activity returns: the tool's outcome, and the lines it held
 * back from the live stream because nobody watched (a bounded number,
 * activities/tools/run-tool.ts; past it they are published as they come).
 */
export type RunToolResult = ToolOutcome & { heldLines?: HeldLine[] };

export type LoadedRun =
  /** `config`: the stopped run's resolved configuration (absent for runs that predate the config query: their raw input is used). */
  | { ok: true; input: AgentInput; config?: RunConfig; result: RunResult; messages: ChatMessage[] }
  | { ok: false; reason: string };

export type ResolvedConfig = { ok: true; cfg: RunConfig } | { ok: false; field: string; message: string };

export type LoadedFork =
  | {
      ok: true;
      /** The source's transcript cut after turn atTurn. */
      messages: ChatMessage[];
      /** The source's input and, when it answers the config query, its resolved configuration. */
      input: AgentInput;
      config?: RunConfig;
      /** The execution read (the workflow id's current one unless a run id was given). */
      runId: string;
      /** Its Temporal status (running, completed, failed, terminated, continued…). */
      temporalStatus: string;
      sourceTurns: number;
      inheritedCostUsd: number | null;
    }
  | { ok: false; reason: string };
