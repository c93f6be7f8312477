// The data that crosses every boundary: workflow input and result, the
// transcript, the five exits. Plain JSON only (no Map, no Date, no class) so it
// survives history, queries and continue-as-new unchanged.
import type { DefinitionField } from './definition.js';
import type { ApproverPolicy } from './signed-decision.js';
import type { ToolSpec } from './tool-spec.js';
import type { ModelSettings } from './model-settings.js';
// Types only: the settings' schemas stay out of whatever imports the contract.
import type { z } from 'zod';
import type { DEDUPE_POLICIES, DEFINITION_CHANGE_POLICIES, NOTIFY_EVENTS, notifySchema, pricingSchema, promptCountSchema, TOOL_ERROR_POLICIES } from './settings.js';

/** One tool call as the OpenAI chat-completions wire format carries it. */
export interface ToolCall {
  /** The call id the model gave it (`c1`, `call_abc…`): what approvals and tool results name. */
  id: string;
  /** Always `function`. */
  type: 'function';
  /** The tool's name and its arguments as the model wrote them (a JSON text, not yet parsed). */
  function: { name: string; arguments: string };
}

/** One message of a run's transcript, in the OpenAI chat-completions wire format. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; name: string; content: string };

/** A model's turn: its text and the tool calls it asks for. */
export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/** Tokens a model call (or a run, summed) used, as the provider reported them. */
export interface Usage {
  /** Every input token, cached ones included. */
  promptTokens: number;
  /** Every output token, reasoning included. */
  completionTokens: number;
  /** Of promptTokens, read from the provider's prompt cache (priced at cacheReadPerMTokUsd); only when the provider reports it. */
  cacheReadTokens?: number;
  /** Of promptTokens, written to the provider's prompt cache (priced at cacheWritePerMTokUsd); only when the provider reports it. */
  cacheWriteTokens?: number;
  /** Of completionTokens, spent reasoning (priced at reasoningPerMTokUsd); only when the provider reports it. */
  reasoningTokens?: number;
}

/** What a run's sub-agents (`research`) spent; already included in its own totals. */
export interface ChildSpend {
  /** Child runs started. */
  runs: number;
  /** What they cost, in USD. */
  costUsd: number;
  /** Their tokens, summed. */
  usage: Usage;
}

/** A run's status: `running` while live, then one of the five exits. */
export type RunStatus =
  | 'running'
  | 'completed'
  | 'failed'
  | 'max_turns_exceeded'
  | 'budget_exceeded'
  | 'interrupted';

/** A finished run never reports `running`. */
export type ExitStatus = Exclude<RunStatus, 'running'>;

/**
 * A run's state in one vocabulary, the same in the status query
 * (`agentStatus`), the AgentStatus search attribute, the CLI and the result:
 * `running`, live but waiting on a person (`awaiting_approval`), or one of
 * the five exits once it has ended; `waiting_for_model` while a model call
 * waits out a provider outage, `waiting_for_tool` while a tool call waits out
 * the outage of what the tool reaches (an MCP server, a team's service, a
 * queue with no worker offering it) (workflows/outage-wait.ts).
 */
export type AgentStatus = 'running' | 'awaiting_approval' | 'awaiting_budget' | 'awaiting_reconciliation' | 'waiting_for_model' | 'waiting_for_tool' | ExitStatus;

/** What a live run waits out, if anything: the model provider or one tool call's infrastructure. */
export type OutageKind = 'model' | 'tool';

/**
 * The AgentStatus of a run: an exit once it ended; live and parked on an
 * approval, `awaiting_approval`; parked because a hard budget cannot pay its
 * next model call, `awaiting_budget`.
 */
export function agentStatusOf(status: RunStatus, interruption: Interruption | null, ended: boolean, waitingOut: OutageKind | null = null): AgentStatus {
  if (!ended && waitingOut === 'model') return 'waiting_for_model';
  if (!ended && waitingOut === 'tool') return 'waiting_for_tool';
  if (!ended && interruption?.type === 'approval') return 'awaiting_approval';
  if (!ended && interruption?.type === 'budget') return 'awaiting_budget';
  if (!ended && interruption?.type === 'reconciliation') return 'awaiting_reconciliation';
  return ended ? (status === 'running' ? 'failed' : status) : 'running';
}

/** A model call waiting out a provider outage: since when, what failed last, when it tries again, when it gives up. */
export interface ModelOutageView {
  /** Workflow time the activity's own retries ran out (ISO 8601). */
  since: string;
  /** Tries made since then (each one attempt of the call). */
  tries: number;
  /** The last attempt's error message. */
  lastError: string;
  /** ProviderUnreachable, ProviderUnavailable, ProviderRateLimited or ProviderTimeout. */
  errorType: string;
  /** When the next try is made (ISO 8601, workflow time). */
  nextTryAt: string;
  /** When the run stops waiting and fails with the last error (its modelOutageMs, or toolOutageMs, after `since`). */
  giveUpAt: string;
}

/**
 * A tool call waiting out an outage: the same fields, `errorType` the type
 * of the activity's last failure (ToolNotOffered, the tool's own error type,
 * or ToolTimeout), and which call waits.
 */
export interface ToolOutageView extends ModelOutageView {
  /** The waiting call's tool. */
  toolName: string;
  /** The waiting call's id. */
  callId: string;
}

/** A hard-budget run parked before a model call it cannot pay: what the call needs, what a raise must reach. */
export interface BudgetShortfall {
  /** Always `budget`: the Interruption's kind. */
  type: 'budget';
  /** The worst case of the next call: its prompt (counted) and a reply of minReplyTokens. */
  needUsd: number;
  /** The smallest budget that pays for it: `raiseBudget` to at least this. */
  needBudgetUsd: number;
  /** needBudgetUsd minus the budget now. */
  shortUsd: number;
  /** The budget now, in USD. */
  maxBudgetUsd: number;
  /** Spent so far, in USD. */
  costUsd: number;
  /** The next call's prompt, as counted (tokens, margin included). */
  promptTokens: number;
  /** The smallest reply (tokens) the call must be able to pay for (`limits.minReplyTokens`). */
  minReplyTokens: number;
}

/** What stopped or parks a run: an approval, a budget, a reconciliation it waits for, or the limit or Stop it ended on. */
export type Interruption =
  /**
   * argsHash: SHA-256 of the arguments' canonical JSON (common/args-hash.ts).
   * callKey: this occurrence of this call of this run chain (`<workflowId>@<chain>/call<n>`), what a signed
   * decision binds beside toolName and argsHash; set while the run is parked (the status query), absent in a
   * result (nothing is left to sign when the approval timed out).
   */
  | { type: 'approval'; callId: string; toolName: string; args: unknown; argsHash: string; callKey?: string }
  | BudgetShortfall
  /** Parked on a write whose outcome is unknown, for a person to say what happened (`unknownOutcomes: "ask"`); callKey as an approval's. */
  | { type: 'reconciliation'; callId: string; toolName: string; args: unknown; known: string; callKey?: string }
  | { type: 'max_turns' }
  | { type: 'max_budget' }
  /** `partialReply`: the model was writing a reply when the Stop reached it. */
  | { type: 'cancelled'; reason: string; partialReply?: PartialReply };

/**
 * The text a streamed model reply had sent when a Stop cut it off. It is not in
 * the transcript (a resume asks for that turn again, whole) and not in the
 * run's costUsd, which counts what providers report; `estimatedCostUsd` is what
 * the provider may bill for the attempt all the same: our count of its prompt
 * and of this text, at the run's prices.
 */
export interface PartialReply {
  /** The turn the reply belonged to. */
  turn: number;
  /** The activity attempt the text came from (the live stream's `token` items carry the same). */
  attempt: number;
  /** What the model had written. */
  text: string;
  /** Our count of the attempt's tokens (prompt, and the text so far). */
  usage: Usage;
  /** What the provider may bill for the attempt, in USD, at the run's prices (not in the run's costUsd). */
  estimatedCostUsd: number;
}

/** How a tool's failure reaches the model: described, as a generic line, or ending the run. */
export type ToolErrorPolicy = (typeof TOOL_ERROR_POLICIES)[number];
/** Which repeated tool calls are answered from the run's cache instead of run again. */
export type DedupePolicy = (typeof DEDUPE_POLICIES)[number];
/** A tool's name as the model calls it; which exist is the worker's choice (activities/tools). */
export type ToolName = string;

/** Prices in US dollars per million tokens: the type of ./settings' pricingSchema, which every source parses them with. */
export type Pricing = z.infer<typeof pricingSchema>;

/** A hard budget's margin on its own prompt count: held tokens = ceil(counted × factor) + overheadTokens. */
export type PromptCountMargin = z.infer<typeof promptCountSchema>;

/** What a run notifies about (docs/operations.md, "Notifications"). */
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** AgentPlugin's `notify` option: the webhooks runs parked on a person are announced to (AGENT_NOTIFY_URL, AGENT_NOTIFY_SLACK_URL, AGENT_OPS_URL). */
export type NotifySetting = z.infer<typeof notifySchema>;

/**
 * What a run records of the worker's notification routes when it starts:
 * each route's filters, never its URL (a Slack webhook URL is a secret, and
 * the worker that sends reads its own). The workflow schedules a notification
 * only for an event and tool some route takes.
 */
export interface NotifyPlan {
  /** Each route's filters, in the worker's order (the activity sends to the route of that index): null takes every event / tool. */
  routes: { events: NotifyEvent[] | null; tools: string[] | null }[];
}

/** The workflow input exactly as `temporal workflow start --input` sends it. */
export interface AgentInput {
  /** What the agent is asked to do: the first user message. Required (a fork may leave it out: it comes from the source). */
  task: string;
  /**
   * A resume or fork whose definition moved under it (fields its own input
   * does not set) is refused while the worker's AGENT_DEFINITION_CHANGE is
   * `refuse`, unless this says the change is known and wanted.
   */
  acknowledgeDefinitionChange?: boolean;
  /** Sent as the request's `model` (the worker's LLM_MODEL overrides it); against the scripted provider, the scenario. Default: the worker's, else `plan`. */
  model?: string;
  /** The system prompt; default the worker's (runDefaults.system, AGENT_DEFAULT_SYSTEM), else none. `null`: none, whatever the worker's default. */
  system?: string | null;
  /**
   * `null` lifts a cap; at least one of the two must stay set. `budgetMode`:
   * `soft` (default) checks the budget before each turn, so spend overshoots
   * by at most one turn; `hard` reserves each call's worst case first and
   * never exceeds it (docs/governance.md, "Hard budget").
   */
  limits?: {
    /** Model calls the run may make; default 15 (or the worker's). */
    maxTurns?: number | null;
    /** What the run may spend, in USD, children included; default 1.0 (or the worker's). */
    maxBudgetUsd?: number | null;
    /** `soft` (default) or `hard`. */
    budgetMode?: BudgetMode;
    /** Hard mode: a model call is not made unless the budget pays for a reply of at least this many tokens. */
    minReplyTokens?: number;
    /** Hard mode: the most max_tokens sent, whatever the budget allows. */
    maxReplyTokens?: number;
    /** A call still parked on an approval this long after it parked notifies `approval_escalated` (below approvalTimeoutMs when both are set). */
    approvalEscalateAfterMs?: number | null;
  };
  /** How a tool's failure reaches the model; default `describe`. */
  toolErrors?: ToolErrorPolicy;
  /** Which repeated calls are answered from the run's cache; default `readOnly`. */
  dedupe?: DedupePolicy;
  /** The tools the run is offered, by name; default: the worker's tools that are enabled by default. An unknown name fails the run at once. */
  tools?: ToolName[];
  /** Sub-folder of the worker's AGENT_WORKSPACE the tools are confined to. */
  workspace?: string;
  /** Prices for costUsd and the budget, in USD per million tokens; a field left out comes from the worker's default prices ($2 in, $12 out unless it sets others). */
  pricing?: Partial<Pricing>;
  /** How long an approval may wait, in ms; absent or null waits forever. */
  approvalTimeoutMs?: number | null;
  /** Hard mode: how long a run parked on its budget waits for a raise before it ends `budget_exceeded`; absent or null waits forever. */
  budgetTimeoutMs?: number | null;
  /** Per-attempt timeouts of the model call and of one tool call, in ms. */
  modelTimeoutMs?: number;
  /** How long a model call waits out a provider that stays down (unreachable, 5xx, 429, timeouts), in ms; default 6 h. */
  modelOutageMs?: number;
  /** How long a tool call waits out failures its own retries did not cure (a server down, no worker offering it, timeouts), in ms; default 6 h. */
  toolOutageMs?: number;
  /** Per-attempt timeout of one tool call, in ms; default 60,000 (a tool's own `activity.startToCloseTimeoutMs` wins). */
  toolTimeoutMs?: number;
  /** Longer tool results are cut with a note the model can read. */
  maxToolResultChars?: number;
  /** Continue as new once history passes this many bytes (Temporal may suggest it earlier). */
  continueAsNewAtHistoryBytes?: number;
  /** Writes each model request (numbered messages, tools) to the trace: `run --debug`. */
  debug?: boolean;
  /**
   * Keeps a long run inside the model's window: `{ "windowTokens": 8000,
   * "strategy": "elide", "keepRecentTurns": 2 }` replaces the oldest tool
   * results with a stub once the next prompt would pass 80 % of the window.
   */
  context?: { windowTokens: number; strategy?: 'elide' | 'summarize'; keepRecentTurns?: number } | null;
  /**
   * The id of a stopped run (turn cap, budget, interrupted) to continue: its
   * transcript and totals carry on, its pending calls are drained first, and
   * what this input sets (new limits, usually) overrides its input.
   */
  resumeFrom?: string | null;
  /**
   * Starts from the first `atTurn` turns of another run (or of an exported
   * transcript), their tool results as the source recorded them: see
   * common/fork.ts. `task` may be left out: it comes from the source.
   */
  forkFrom?: ForkRequest | null;
  /**
   * A write whose outcome is unknown (its attempt started and never reported)
   * is told to the model as such (`tell_model`, the default), or parks the run
   * for a person to reconcile (`ask`: the `reconcile` update).
   */
  unknownOutcomes?: UnknownOutcomePolicy;
  /**
   * A JSON Schema the final answer must be JSON valid against (at most 16 KiB,
   * 32 levels, local `$ref`s only). The result then carries the parsed value
   * as `structuredOutput`. An answer that does not parse or validate goes back
   * to the model with the validator's message, as a turn (common/output-schema.ts).
   */
  outputSchema?: Record<string, unknown>;
  /** Answers that miss `outputSchema` before the run ends `failed`, errorType `InvalidOutput`; default 2, at most 10. */
  maxOutputRetries?: number;
  /** Temperature, topP, maxOutputTokens, stopSequences, seed, toolChoice, providerOptions: sent with every turn's model call as given (common/model-settings.ts). */
  modelSettings?: ModelSettings;
  /**
   * A JSON object (at most 8 KiB encoded, 8 levels deep) the caller attaches
   * to the run: tenant, user, ticket. Every tool receives it as
   * `ctx.run.context`; sub-agents inherit it; the model never sees it unless a
   * tool returns it. Not part of definitionHash.
   */
  runContext?: Record<string, unknown>;
}

/** What a write whose outcome is unknown does: told to the model, or parks the run for a person. */
export type UnknownOutcomePolicy = 'tell_model' | 'ask';

/** The input after validation, every default filled in (the fields without a comment are the input's of the same name). */
export interface RunConfig {
  /** The input's `task`. */
  task: string;
  /** The model the run asks for. */
  model: string;
  /** The system prompt, or null for none. */
  system: string | null;
  /** The turn cap; null: none. */
  maxTurns: number | null;
  /** The budget in USD; null: none. */
  maxBudgetUsd: number | null;
  /** How a tool's failure reaches the model. */
  toolErrors: ToolErrorPolicy;
  /** Which repeated calls are answered from the cache. */
  dedupe: DedupePolicy;
  /** The tools the run is offered. */
  tools: ToolName[];
  /** The specs of `tools`, as the worker offered them when the run started (a new tool version never changes a run under way). */
  toolSpecs: ToolSpec[];
  /** The workspace sub-folder, under the worker's AGENT_WORKSPACE. */
  workspace: string;
  /** The prices, in USD per million tokens. */
  pricing: Pricing;
  /** How long an approval may wait, in ms; null: forever. */
  approvalTimeoutMs: number | null;
  /** limits.approvalEscalateAfterMs; absent: no escalation. */
  approvalEscalateAfterMs?: number;
  /** The worker's notification routes when the run started (their filters only); absent: the run notifies nobody and schedules nothing. */
  notify?: NotifyPlan;
  /** Per-attempt timeout of a model call, in ms. */
  modelTimeoutMs: number;
  /** Absent unless the input or the worker (AGENT_MODEL_OUTAGE_MS) set it: DEFAULT_MODEL_OUTAGE_MS (common/provider-errors.ts). */
  modelOutageMs?: number;
  /** Absent unless the input or the worker (AGENT_TOOL_OUTAGE_MS) set it: DEFAULT_TOOL_OUTAGE_MS (common/provider-errors.ts). */
  toolOutageMs?: number;
  /** Per-attempt timeout of a tool call, in ms. */
  toolTimeoutMs: number;
  /** Longer tool results are cut. */
  maxToolResultChars: number;
  /** The history size, in bytes, past which the run continues as new. */
  continueAsNewAtHistoryBytes: number;
  /**
   * `stop`: an error the model cannot act on ends the run. Not an input: a run
   * always resolves `stop`; only the harness's experiments set `retry`
   * (test/helpers/experiments.ts), to measure the loop that keeps retrying
   * what cannot succeed.
   */
  permanentToolErrors: 'stop' | 'retry';
  /**
   * Not an input, always false: only the harness's experiments set it (a
   * rejected call's result empty instead of the decision in words), to
   * measure how often a model then claims the call happened.
   */
  experimentalEmptyRejection: boolean;
  /** Model requests are written to the trace. */
  debug: boolean;
  /** null: the transcript is sent whole, however long. */
  context: ContextPolicy | null;
  /** The run this one continues, or null. */
  resumeFrom: string | null;
  /** Where a fork came from; absent for other runs. */
  forkFrom?: ForkOrigin;
  /**
   * How long a model or tool call may go without a heartbeat before Temporal
   * retries it, as the worker that started the run set it (twice its
   * heartbeat interval, at least 10 s). Absent (a configuration parsed
   * without a worker's resolveConfig): 10 s (workflows/activity-options.ts).
   */
  heartbeatTimeoutMs?: number;
  /**
   * Tools whose approval must carry the call's argsHash (the worker's
   * AGENT_REQUIRE_ARGS_HASH, an ops setting). Absent: none.
   */
  requireArgsHash?: ToolName[];
  /**
   * An ops setting (the worker's AGENT_FAIL_WORKFLOW_ON_FAILED, AgentPlugin
   * `runDefaults.failedRunsFailWorkflow`): a run that ends `failed` fails its
   * workflow with an ApplicationFailure (type: the run's errorType) whose
   * details carry the RunResult, so Temporal's own failure tooling
   * (`ExecutionStatus="Failed"`, failure alerts) sees it. Absent: false (the
   * workflow completes, its result saying `failed`).
   */
  failedRunsFailWorkflow?: boolean;
  /** Present only for a hard budget (absent: soft, as every run before it). */
  hardBudget?: HardBudgetConfig;
  /** Recorded only when the input asks `ask`; absent: `tell_model`. */
  unknownOutcomes?: UnknownOutcomePolicy;
  /**
   * The worker's AGENT_DEFINITION_CHANGE when the run started: whether a
   * continuation whose definition moved under it is refused. Absent (a
   * configuration parsed without a worker's resolveConfig): allowed.
   */
  definitionChange?: DefinitionChangePolicy;
  /**
   * Whether the worker that started the run encrypts payloads
   * (AGENT_PAYLOAD_KEYS, or the plugin's payloadKeys), recorded so a replay
   * shows what the run showed. Then what is not encrypted (the
   * AgentExitReason search attribute) carries no tool or model text: a
   * generic line naming the exit and the error type. Absent: false.
   */
  payloadsEncrypted?: boolean;
  /**
   * The worker's approvers policy (AGENT_APPROVERS) when the run started:
   * public keys and who may decide what. Decisions it lists must be signed
   * (common/signed-decision.ts). Absent (no policy): decisions are taken
   * unsigned.
   */
  approvers?: ApproverPolicy;
  /** Where `approvers` came from, as refusals name it: `AGENT_APPROVERS`, or `AgentPlugin option runDefaults.approvers`; absent: AGENT_APPROVERS. */
  approversSource?: string;
  /** A resumed or forked run: its source's definition hash and the fields that differ (set by the workflow). */
  definitionFrom?: { hash: string; changed: DefinitionField[] };
  /** The input's outputSchema; absent: the answer is free text. */
  outputSchema?: Record<string, unknown>;
  /** Present with outputSchema: the misses allowed before the run fails InvalidOutput. */
  maxOutputRetries?: number;
  /** The input's modelSettings, the fields given; absent: none (the provider's defaults). */
  modelSettings?: ModelSettings;
  /** The input's runContext, handed to every tool as `ctx.run.context` (never to the model); absent: none given. */
  runContext?: Record<string, unknown>;
}

/** The worker's AGENT_DEFINITION_CHANGE: a resume or fork whose definition moved under it is refused (unless acknowledged) or allowed. */
export type DefinitionChangePolicy = (typeof DEFINITION_CHANGE_POLICIES)[number];

/** `soft`: checked before each turn (overshoot at most one turn); `hard`: never exceeded. */
export type BudgetMode = 'soft' | 'hard';

/** A hard budget's settings (the budget itself is maxBudgetUsd; a raise updates it). */
export interface HardBudgetConfig {
  /** A call is not made unless the budget pays for a reply of at least this many tokens; default 256. */
  minReplyTokens: number;
  /** The most max_tokens a call sends; default 4096. */
  maxReplyTokens: number;
  /** How long a run parked on its budget waits for a raise, in ms; null: forever. */
  budgetTimeoutMs: number | null;
}

/** A hard budget as the status query and the result show it. */
export interface BudgetView {
  /** Always `hard` (a soft budget has no view). */
  mode: 'hard';
  /** The budget now (raises included), in USD. */
  maxBudgetUsd: number;
  /** Spent: turns charged and children settled. */
  spentUsd: number;
  /** Held for what runs now (a model call's worst case, children's budgets). */
  heldUsd: number;
  /** The budget less spent and held, in USD. */
  availableUsd: number;
  /** Every raise, oldest first. */
  raises: BudgetRaise[];
}

/** One raise of a hard budget: from, to, by whom and why. */
export interface BudgetRaise {
  /** The budget before, in USD. */
  fromUsd: number;
  /** The budget after, in USD. */
  toUsd: number;
  /** Who raised it, as the update said. */
  by: string;
  /** Why, as the update said; null if it gave none. */
  reason: string | null;
}

/** A reply whose usage says it cost more than its hold: counted, flagged, the excess not charged, the run stopped. */
export interface OverReservationFlag {
  /** The turn of the reply. */
  turn: number;
  /** The max_tokens the call sent. */
  maxTokens: number;
  /** Prompt tokens the provider reported. */
  promptTokens: number;
  /** Completion tokens the provider reported. */
  completionTokens: number;
  /** What the call held, in USD. */
  reservedUsd: number;
  /** What the reported usage costs, in USD. */
  reportedUsd: number;
  /** reportedUsd less reservedUsd: not charged to the budget. */
  excessUsd: number;
}

/** The failure type of a workflow failed by failedRunsFailWorkflow: its details carry the RunResult. */
export const AGENT_RUN_FAILED = 'AgentRunFailed';

/** What an input left out is filled from these. */
export type RunDefaults = Pick<
  RunConfig,
  | 'model'
  | 'system'
  | 'maxTurns'
  | 'maxBudgetUsd'
  | 'toolErrors'
  | 'dedupe'
  | 'tools'
  | 'workspace'
  | 'pricing'
  | 'approvalTimeoutMs'
  | 'modelTimeoutMs'
  | 'modelOutageMs'
  | 'toolOutageMs'
  | 'toolTimeoutMs'
  | 'maxToolResultChars'
  | 'continueAsNewAtHistoryBytes'
  | 'requireArgsHash'
  | 'failedRunsFailWorkflow'
  | 'definitionChange'
  | 'approvers'
>;

/** The workflow's return value: one of the five exits with its totals (also for runs that did not complete). */
/**
 * `T`: the type of `structuredOutput`, when the caller knows it (AgentClient's
 * `start` with a zod `outputSchema` option types it); `unknown` otherwise.
 */
export interface RunResult<T = unknown> {
  /** The workflow id (named runId in the published contract). */
  runId: string;
  /** The workflow id: names the run, stable across continue-as-new. */
  workflowId: string;
  /** How it ended: one of the five exits. */
  status: ExitStatus;
  /** The run's AgentStatus: its exit, in the one vocabulary. */
  agentStatus: ExitStatus;
  /** Why the run stopped, in one line. */
  reason: string;
  /** The limit, Stop or wait it ended on; null for `completed` and `failed`. */
  interruption: Interruption | null;
  /** The final answer of a `completed` run, else null. */
  output: string | null;
  /** What failed, for a `failed` run, else null. */
  error: string | null;
  /** The failure's type when `failed` (ProviderUnauthorized, PermanentToolError, ProtocolError, …), else null. */
  errorType: string | null;
  /** Model calls made. */
  turns: number;
  /** Tool calls executed. */
  toolRuns: number;
  /** What the run spent, in USD, children included. */
  costUsd: number;
  /** Tokens, summed over the run's model calls (children's included). */
  usage: Usage;
  /** Turns whose reply carried no usage, priced from the harness's own token count. */
  usageEstimatedTurns: number;
  /** The prompt tokens of each turn, in order. */
  promptTokensPerTurn: number[];
  /** What its sub-agents spent (already in costUsd and usage). */
  children: ChildSpend;
  /** A fork's source and what the source paid for the inherited turns (not in costUsd). */
  forkedFrom?: ForkOrigin;
  /** SHA-256 (hex) of what defines the run: system prompt, tool specs, model, prices, limits (common/definition.ts). */
  definitionHash?: string;
  /** A resumed or forked run: its source's definitionHash. */
  sourceDefinitionHash?: string;
  /** A resumed or forked run: the fields of its definition that differ from its source's (empty: none). */
  definitionChanged?: DefinitionField[];
  /** Hard budget only: the budget at the end. */
  budget?: BudgetView;
  /** Hard budget only: the reply that reported more than its hold allowed, or null. */
  usageOverReservation?: OverReservationFlag | null;
  /** A `completed` run with an outputSchema: the final answer, parsed (valid against the schema). */
  structuredOutput?: T;
}

/** What the `status` query answers while the run is live, and after. */
export interface RunStatusView {
  /** The workflow id (named runId in the published contract). */
  runId: string;
  /** The workflow id: names the run, stable across continue-as-new. */
  workflowId: string;
  /** `running`, or the exit once it ended. */
  status: RunStatus;
  /** The same state as the AgentStatus search attribute, at every moment. */
  agentStatus: AgentStatus;
  /** Why the run ended (one line), once it has; null while it is live. */
  reason: string | null;
  /** A failed run's error type (InvalidInput, ProviderUnauthorized, …); null otherwise. */
  errorType: string | null;
  /** What it is parked on (an approval, a budget, a reconciliation), or ended on; null otherwise. */
  interruption: Interruption | null;
  /**
   * The run chain, `<workflowId>@<first execution's run id>`: what a signed
   * steer or raiseBudget binds as its callKey (a workflow id used again is
   * another chain). Absent from statuses of workers before it.
   */
  runKey?: string;
  /** Model calls made so far. */
  turns: number;
  /** Spent so far, in USD, children included. */
  costUsd: number;
  /** Tool calls that ran so far. */
  toolRuns: number;
  /** Tokens so far. */
  usage: Usage;
  /** Turns whose reply carried no usage, priced from the harness's own token count. */
  usageEstimatedTurns: number;
  /** What its sub-agents spent so far (already in costUsd and usage). */
  children: ChildSpend;
  /** A fork's source and what the source paid for the inherited turns (not in costUsd). */
  forkedFrom?: ForkOrigin;
  /** The run's runContext (tenant, user, ticket: what its tools are scoped to); absent when none was given. */
  runContext?: Record<string, unknown>;
  /** SHA-256 (hex) of what defines the run: system prompt, tool specs, model, prices, limits (common/definition.ts). */
  definitionHash?: string;
  /** A resumed or forked run: its source's definitionHash. */
  sourceDefinitionHash?: string;
  /** A resumed or forked run: the fields of its definition that differ from its source's (empty: none). */
  definitionChanged?: DefinitionField[];
  /** The run's modelSettings, as given (absent: none). */
  modelSettings?: ModelSettings;
  /** A run with an outputSchema: its final answers that missed it so far. */
  outputMisses?: number;
  /** Steering messages received and not yet in the transcript (applied at the next turn boundary). */
  queuedSteers: SteerView[];
  /**
   * Only in a `steer` update's answer with `interrupt`: the call parked on an
   * approval that the message declines (the run declines it as it wakes, just
   * after answering: `agentStatus` and `interruption` already say so).
   */
  declinedByInterrupt?: { callId: string; toolName: string };
  /** Hard budget only: spent, held, available, raises. */
  budget?: BudgetView;
  /** Hard budget only: the reply that reported more than its hold allowed, or null. */
  usageOverReservation?: OverReservationFlag | null;
  /** Present while a model call waits out a provider outage (agentStatus `waiting_for_model`). */
  modelOutage?: ModelOutageView;
  /** Present while a tool call waits out an outage (agentStatus `waiting_for_tool`). */
  toolOutage?: ToolOutageView;
}

/** A steering message as the status shows it while it waits for the next turn boundary. */
export interface SteerView {
  /** The text the model will be given. */
  message: string;
  /** Who sent it; null when the sender gave no name. */
  by: string | null;
  /** Workflow time it arrived (ISO 8601). */
  at: string;
  /** It asked to interrupt: a call parked on an approval is declined for it. */
  interrupt: boolean;
}

/**
 * What the tool activity reports. Tool failures are observations, not throws.
 * `ref`: the store address of the tool message built from `content`, when the
 * activity filed it. The effect protocol of writes (docs/effects.md) adds:
 * - `outcomeUnknown`: an attempt of this write started and never reported (a
 *   worker killed, a request that timed out after it was sent); whether it
 *   happened nobody knows, and it was not done again. `content` says so in
 *   words the model can read; a run may park for a person instead.
 * - `earlierRun`: another run of this workflow (before a reset) already did
 *   (or tried) this call; `content`/`error` say "already deleted by run R at
 *   T (not deleted again): …". Its Temporal run id.
 */
export type ToolOutcome =
  | { ok: true; content: string; ref?: string; outcomeUnknown?: true; earlierRun?: string }
  | { ok: false; error: string; permanent: boolean; earlierRun?: string };

/** What the model activity returns for one turn. */
export interface ModelReply {
  message: AssistantMessage;
  usage: Usage;
  finishReason: string;
  /** The model name the worker really sent (LLM_MODEL overrides the run's); absent when the activity that answered does not say. */
  model?: string;
  /** The provider's reply carried no usage: the tokens are the harness's own count (o200k_base). */
  usageEstimated?: boolean;
}

/** How a run keeps its prompt inside the model's window (the input's `context`). */
export interface ContextPolicy {
  /** The model's context window in tokens (prompt and tool definitions included). */
  windowTokens: number;
  /** elide: stub old tool results, then drop old turns. summarize: fold old turns into a summary written by the model. */
  strategy: 'elide' | 'summarize';
  /** The most recent turns are never elided. */
  keepRecentTurns: number;
}

/** The task queue the harness's workers poll unless AGENT_TASK_QUEUE says otherwise (the contract). */
export const DEFAULT_TASK_QUEUE = 'agent-harness';

/** `forkFrom` as the input carries it: a run (its workflow id, optionally one execution) or an exported transcript. */
export interface ForkRequest {
  /** The source's workflow id. With `transcript`, only a label (the run the file was exported from). */
  run?: string;
  /** One execution of the source (a run reset away, say); default: the workflow id's current execution. */
  runId?: string;
  /** Turns to keep: the fork's first model call is turn atTurn + 1. */
  atTurn: number;
  /** A user message appended after turn atTurn. */
  message?: string;
  /** An exported run's messages (`agent-harness export`), instead of `run`. */
  transcript?: ChatMessage[];
  /** The exported run's cost per turn, for inheritedCostUsd. */
  turnCostsUsd?: number[];
}

/** Where a fork came from: in its configuration, status, result and `run_started` trace line. */
export interface ForkOrigin {
  /** The source's workflow id (null for a file that did not name one). */
  run: string | null;
  /** The same workflow id as `run`, under the name new fields use (`runId` below is Temporal's run id). */
  workflowId: string | null;
  /** The source execution's Temporal run id (null for a file). */
  runId: string | null;
  /** Turns kept from the source. */
  atTurn: number;
  /** The user message appended after them, or null. */
  message: string | null;
  /** What the source paid for the inherited turns; null when its history does not say (a source that was itself resumed, say). */
  inheritedCostUsd: number | null;
  /** It was forked from an exported transcript, not a live history. */
  fromFile: boolean;
}
