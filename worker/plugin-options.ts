// AgentPlugin's options: their types (what a team writes), the check of a
// value given at run time (a typo or a wrong type is one line naming the
// option), and the defaults. Each option is a setting of the standalone
// worker, which reads the environment into these options (./env-options.ts)
// and passes them here; the table in docs/plugin.md pairs them.
import { isHttpUrl } from '../node/env-schema.js';
import type { PayloadKey } from '../node/payload-keys.js';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Runtime } from '@temporalio/worker';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { AnyToolDefinition } from '../activities/tools/define-tool.js';
import type { EffectStore } from '../activities/effects/record.js';
import type { McpConfigFile } from '../activities/tools/mcp/config-schema.js';
import { type LedgerConfig, type RetentionConfig, type SearchAttributeMode, type ToolsetCheck } from '../node/config.js';
import type { NotifySetting, Pricing, RunDefaults } from '../common/contract.js';
import { parseApproverPolicy, type ApproverPolicy } from '../common/signed-decision.js';
import { DEFAULT_HEARTBEAT_MS } from '../node/heartbeat.js';
import { firstProblem, got, strictObject } from '../common/schema-problem.js';
import { DEDUPE_POLICIES, defaultSystemSchema, DEFINITION_CHANGE_POLICIES, LIVE_STREAMS, modelPricesSchema, notifySchema, oneOf, positive, positiveInt, pricingSchema, SEARCH_ATTRIBUTE_MODES, TOOL_ERROR_POLICIES, TOOLSET_CHECKS } from '../common/settings.js';
import { isModelProvider, type ModelProvider } from '../activities/ai-sdk-model.js';
import { NO_TOKENS, type TokenSink } from '../node/token-sink.js';
import { streamTokenSink } from '../activities/live-stream.js';
import { OPTION_NAMES, type SettingNames } from './setting-names.js';

/** An OpenAI-compatible chat-completions endpoint, called by the built-in client. */
export interface ModelEndpoint {
  /** E.g. `https://api.openai.com/v1` (LLM_BASE_URL). */
  baseUrl: string;
  /** Sent as the bearer token (LLM_API_KEY). */
  apiKey?: string;
  /** Sent as every request's `model` instead of the run's (LLM_MODEL). */
  model?: string;
}

/**
 * An AI SDK provider instead of the built-in client: `createAnthropic({...})`,
 * `createOpenAICompatible({...})`, any ProviderV3 or a `(modelId) =>
 * LanguageModelV3` (LLM_PROVIDER makes one from LLM_BASE_URL, LLM_API_KEY).
 * The run's `model` names the model it is asked for.
 */
export interface ModelProviderSetting {
  /** The provider (or model factory) model calls go through. */
  provider: ModelProvider;
  /** Asked for instead of the run's `model` (LLM_MODEL). */
  model?: string;
}

/** Where the workflow's and the activities' OpenTelemetry spans go (the team's own tracer setup). */
export interface PluginTracing {
  /** Receives every span the plugin's interceptors end. */
  spanProcessor: SpanProcessor;
  /** Describes the process (service name, version) on every span. */
  resource: Resource;
}

/** Where the plugin's start-up notes go (default: the Temporal runtime's logger). */
export type PluginLog = Pick<Console, 'log' | 'warn'>;

/**
 * The options of {@link AgentPlugin}. Only `model` and `workspace` are
 * required. The Temporal connection, namespace, task queue, workflow cache,
 * Worker Versioning and workflow bundle are Worker.create's own options.
 */
export interface AgentPluginOptions {
  /** The model endpoint (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), or an AI SDK provider (LLM_PROVIDER). */
  model: ModelEndpoint | ModelProviderSetting;
  /**
   * What the run's live stream (topic `events`) carries (AGENT_LIVE_STREAM).
   * `full` (default): the trace events, the model's text as it arrives and
   * tool progress; each batch the worker publishes is a signal (one Temporal
   * Action), sent only while a reader is attached (a reply sent while nobody
   * reads is published whole by the workflow at its end, at no Action).
   * `events`: only the trace events, which the workflow publishes itself (no
   * signal; a subscriber's polls are the only cost), and the model is called
   * unstreamed.
   */
  stream?: (typeof LIVE_STREAMS)[number];
  /** Where each model attempt's reply text goes instead (default: the live stream when `stream` is `full`, else nowhere). */
  tokens?: TokenSink;
  /** The folder the runs' workspaces live in; tools are confined to a run's (AGENT_WORKSPACE). */
  workspace: string;
  /** The team's tools, as values (defineTool) (AGENT_TOOLS_MODULES, by path). */
  tools?: readonly AnyToolDefinition[];
  /**
   * Offer the built-in tools too (list_files, read_file, delete_file,
   * scan_archive, research) beside `tools` (AGENT_BUILTIN_TOOLS=true, read
   * when this is absent). Default false: a run started without `tools` (a
   * `temporal workflow start`) is offered the team's tools only, never a
   * deletion the team did not ask for.
   */
  builtinTools?: boolean;
  /** The files a new workspace starts with (name → text), written the first time a run uses it. Default: none (the demo stack seeds its demo files this way). */
  seedFiles?: Readonly<Record<string, string>>;
  /** Offer only these tools, of the built-ins, `tools` and the MCP servers' (AGENT_TOOLS). */
  only?: readonly string[];
  /** MCP servers whose tools are offered: a JSON file's path, or its content (AGENT_MCP_CONFIG). */
  mcp?: string | McpConfigFile;
  /**
   * The effect ledger of write tools: a folder (LEDGER_DIR, default
   * `<workspace>/.ledger`), a PostgreSQL database every worker reaches
   * (AGENT_LEDGER_URL), or a store the caller opened and closes.
   */
  ledger?: LedgerConfig | EffectStore;
  /** How long and how large the ledger, traces and message store may grow (AGENT_RETENTION*, AGENT_*_MAX_BYTES). */
  retention?: Partial<RetentionConfig>;
  /** Where each run's JSONL trace goes (TRACE_DIR; default `<workspace>/.traces`). */
  traceDir?: string;
  /** Where prompt messages are filed by content address (MESSAGE_STORE_DIR; default `<workspace>/.messages`). */
  messageStoreDir?: string;
  /** What a run's input leaves out (AGENT_DEFAULT_MAX_TURNS, AGENT_DEFAULT_BUDGET_USD, AGENT_DEFAULT_APPROVAL_TIMEOUT_MS, AGENT_MODEL_OUTAGE_MS, AGENT_REQUIRE_ARGS_HASH, AGENT_APPROVERS as `approvers`: the policy object). */
  runDefaults?: Partial<RunDefaults>;
  /** Prices of models beyond the scripted provider's: what a hard budget may run on (AGENT_MODEL_PRICES). */
  modelPrices?: Record<string, Pricing>;
  /** How often a running model or tool call heartbeats, in ms (AGENT_HEARTBEAT_MS; default 5000). */
  heartbeatEveryMs?: number;
  /** Payload encryption keys as values, the first encrypts (AGENT_PAYLOAD_KEYS, read when absent); null: none. */
  payloadKeys?: readonly PayloadKey[] | null;
  /** `create` (default) adds the search attributes the namespace lacks; `check` only checks (AGENT_SEARCH_ATTRIBUTES). */
  searchAttributes?: SearchAttributeMode;
  /** `refuse` (default): a queue polled by workers offering other tools stops this one; `warn` only says so (AGENT_TOOLSET_CHECK). */
  toolsetCheck?: ToolsetCheck;
  /**
   * Poll `agent-harness-<tool-set hash>` instead of Worker.create's
   * taskQueue when the tools differ from the built-in set (the standalone
   * worker's default, when AGENT_TASK_QUEUE is unset). Default false.
   */
  ownQueue?: boolean;
  /** OpenTelemetry spans of the runs (OTEL_EXPORTER_OTLP_ENDPOINT); unset or null: none. */
  tracing?: PluginTracing | null;
  /** Where start-up notes and retention lines go. */
  log?: PluginLog;
  /**
   * Webhooks told when a run parks on a person (approval, budget,
   * reconciliation) or an approval escalates: `{ routes: [{ url, format:
   * 'json' | 'slack', events?, tools? }], inboxUrl? }` (AGENT_NOTIFY_URL,
   * AGENT_NOTIFY_SLACK_URL, AGENT_OPS_URL). Absent or null: no notification,
   * and runs schedule none. docs/operations.md, "Notifications".
   */
  notify?: NotifySetting | null;
}

/** The options with every default filled. */
export interface ResolvedPluginOptions {
  model: ModelEndpoint | ModelProviderSetting;
  tokens: TokenSink;
  /** Tool progress on the live stream too. */
  liveProgress: boolean;
  workspaceRoot: string;
  tools: readonly AnyToolDefinition[];
  builtinTools: boolean;
  seedFiles: Readonly<Record<string, string>>;
  only: readonly string[] | null;
  mcp: string | McpConfigFile | null;
  /** An EffectStore here is the caller's: the plugin never closes it. */
  ledger: LedgerConfig | EffectStore;
  retention: RetentionConfig;
  traceDir: string;
  messageStoreDir: string;
  runDefaults: Partial<RunDefaults>;
  modelPrices: Record<string, Pricing>;
  heartbeatEveryMs: number;
  /** undefined: AGENT_PAYLOAD_KEYS decides. */
  payloadKeys?: readonly PayloadKey[] | null;
  searchAttributes: SearchAttributeMode;
  toolsetCheck: ToolsetCheck;
  ownQueue: boolean;
  tracing: PluginTracing | null;
  log: PluginLog;
  notify: NotifySetting | null;
}

const NOT_OBJECT = 'must be an object';
/** A seed file's name: one plain file in the workspace's top folder. */
const SEED_NAME = /^[A-Za-z0-9._-]{1,255}$/;

function approverProblem(v: unknown): string | null {
  try {
    parseApproverPolicy(v, 'approvers');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
const string = z.string(got('must be a string'));
const nonEmpty = string.refine((s) => s.trim() !== '', got('must not be empty'));
const strings = z.array(string, got('must be a list of strings'));
const flag = z.boolean(got('must be true or false'));
/** An object with these methods: the values the options take that zod cannot describe (a store, a span processor, a logger). */
const withMethods = <T>(what: string, ...methods: string[]) =>
  z.custom<T>((v) => typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'), { message: `must be ${what}` });

const runDefaults = strictObject(
  {
    model: nonEmpty.optional(),
    system: defaultSystemSchema.optional(),
    maxTurns: positiveInt.nullable().optional(),
    maxBudgetUsd: positive.nullable().optional(),
    toolErrors: oneOf(TOOL_ERROR_POLICIES).optional(),
    dedupe: oneOf(DEDUPE_POLICIES).optional(),
    tools: strings.optional(),
    workspace: nonEmpty.optional(),
    pricing: pricingSchema.optional(),
    approvalTimeoutMs: positiveInt.nullable().optional(),
    modelTimeoutMs: positiveInt.optional(),
    modelOutageMs: positiveInt.optional(),
    toolOutageMs: positiveInt.optional(),
    toolTimeoutMs: positiveInt.optional(),
    maxToolResultChars: positiveInt.optional(),
    continueAsNewAtHistoryBytes: positiveInt.optional(),
    requireArgsHash: strings.optional(),
    failedRunsFailWorkflow: z.boolean().optional(),
    definitionChange: oneOf(DEFINITION_CHANGE_POLICIES).optional(),
    // The policy file's shape (common/signed-decision.ts checks it; the message names what is wrong).
    approvers: z
      .custom<ApproverPolicy>((v) => approverProblem(v) === null, { error: (iss) => approverProblem(iss.input) ?? 'is not an approvers policy' })
      .optional(),
  },
  NOT_OBJECT,
  'is not a run default',
);

const retention = strictObject(
  {
    enabled: flag.optional(),
    maxAgeMs: positiveInt.nullable().optional(),
    ledgerMaxBytes: positiveInt.nullable().optional(),
    traceMaxBytes: positiveInt.nullable().optional(),
    messageStoreMaxBytes: positiveInt.nullable().optional(),
    intervalMs: positiveInt.optional(),
    logEveryPass: flag.optional(),
  },
  NOT_OBJECT,
  'is not a retention setting',
);

const ledger = z.union(
  [
    strictObject({ kind: z.literal('folder'), dir: nonEmpty }, NOT_OBJECT),
    strictObject({ kind: z.literal('postgres'), url: string.refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL') }, NOT_OBJECT),
    withMethods<EffectStore>('an EffectStore', 'read', 'create', 'replace', 'release', 'close'),
  ],
  { error: () => 'must be {kind: "folder", dir}, {kind: "postgres", url} or an EffectStore' },
);

const mcpContent = z.custom<McpConfigFile>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: 'must be a path or an object like {"servers": {...}}' });

const MODEL_SHAPE = 'must be an object like {"baseUrl": "https://api.openai.com/v1", "apiKey": "..."} or {"provider": createAnthropic({...})}';
const endpointSetting = strictObject(
  { baseUrl: string.refine(isHttpUrl, got('must be an http: or https: URL')), apiKey: string.optional(), model: nonEmpty.optional() },
  MODEL_SHAPE,
  'is not a model setting',
);
const providerSetting = strictObject(
  { provider: z.custom<ModelProvider>(isModelProvider, { message: 'must be an AI SDK provider (createAnthropic({...}), a ProviderV3 or ProviderV4) or a (modelId) => LanguageModelV3 | LanguageModelV4' }), model: nonEmpty.optional() },
  MODEL_SHAPE,
  'is not a model setting',
);
/**
 * One of the two settings, told apart by `provider`: each refusal is the
 * chosen shape's own (a union's would be "no shape matched", naming no field).
 */
const modelSetting = z.unknown().transform((v, ctx): ModelEndpoint | ModelProviderSetting => {
  const r = (typeof v === 'object' && v !== null && 'provider' in v ? providerSetting : endpointSetting).safeParse(v);
  if (r.success) return r.data;
  for (const i of r.error.issues) ctx.addIssue({ code: 'custom', message: i.message, path: i.code === 'unrecognized_keys' ? [...i.path, i.keys[0]] : i.path, input: i.input });
  return z.NEVER;
});

/** In the order a refusal lists them. */
const optionsSchema = strictObject(
  {
    model: modelSetting,
    workspace: nonEmpty,
    tools: z.array(z.custom<AnyToolDefinition>((v) => typeof v === 'object' && v !== null, got('must be a tool definition (defineTool({...}))')), got('must be a list of tool definitions')).optional(),
    builtinTools: flag.optional(),
    // Written into the workspace by name: a name that is a path ('../x', 'a/b', '/etc/x') would write where the workspace rule never looks.
    seedFiles: z
      .record(z.string(), string, got('must map file names to their text'))
      .superRefine((files, ctx) => {
        const bad = Object.keys(files).find((n) => !SEED_NAME.test(n) || n === '.' || n === '..');
        if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `names ${JSON.stringify(bad.slice(0, 80))}, which is not a plain file name (letters, digits, . _ -; no folders)` });
      })
      .optional(),
    only: strings.optional(),
    mcp: z.union([nonEmpty, mcpContent], { error: () => 'must be a path or an object like {"servers": {...}}' }).optional(),
    ledger: ledger.optional(),
    retention: retention.optional(),
    traceDir: nonEmpty.optional(),
    messageStoreDir: nonEmpty.optional(),
    runDefaults: runDefaults.optional(),
    // The schema AGENT_MODEL_PRICES is read with (node/config.ts): the two take the same prices.
    modelPrices: modelPricesSchema.optional(),
    heartbeatEveryMs: positiveInt.optional(),
    payloadKeys: z
      .array(z.custom<PayloadKey>((v) => typeof v === 'object' && v !== null && typeof (v as Partial<PayloadKey>).id === 'string' && (v as Partial<PayloadKey>).key instanceof Uint8Array && (v as PayloadKey).key.length === 32, got('must be {id, key} with a 32-byte key')), got('must be a list of {id, key}'))
      .nullable()
      .optional(),
    searchAttributes: oneOf(SEARCH_ATTRIBUTE_MODES).optional(),
    toolsetCheck: oneOf(TOOLSET_CHECKS).optional(),
    ownQueue: flag.optional(),
    tracing: z
      .custom<PluginTracing>((v) => typeof v === 'object' && v !== null && typeof (v as Partial<PluginTracing>).spanProcessor?.onEnd === 'function' && typeof (v as Partial<PluginTracing>).resource === 'object', {
        message: 'must be {spanProcessor, resource} (a SpanProcessor and a Resource of @opentelemetry)',
      })
      .nullable()
      .optional(),
    log: withMethods<PluginLog>('an object with log and warn functions', 'log', 'warn').optional(),
    tokens: withMethods<TokenSink>('an object with an open function', 'open').optional(),
    stream: oneOf(LIVE_STREAMS).optional(),
    notify: notifySchema.nullable().optional(),
  },
  'must be an object like {"model": {"baseUrl": "..."}, "workspace": "/srv/agent"}',
  'is not an option',
);

// Compile-time: what the schema lets through is the options' type.
const _sameShape: (checked: z.infer<typeof optionsSchema>) => AgentPluginOptions = (checked) => checked;
void _sameShape;

/**
 * Checks options given at run time (a caller in plain JavaScript, or one that
 * cast) and fills the defaults; throws one line naming the setting where it
 * came from: the option (`AgentPlugin option limits.maxTurns`), or for the
 * standalone worker, whose options the environment made, the variable.
 */
export function resolveOptions(raw: unknown, names: Pick<SettingNames, 'option'> = OPTION_NAMES): ResolvedPluginOptions {
  const parsed = optionsSchema.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstProblem(parsed.error);
    throw new Error(field ? `${names.option(field)} ${message}` : `AgentPlugin options ${message}`);
  }
  const o = parsed.data;
  const workspaceRoot = resolve(o.workspace);
  const r = o.retention ?? {};
  return {
    model: o.model,
    tokens: o.tokens ?? (o.stream === 'events' ? NO_TOKENS : streamTokenSink()),
    liveProgress: o.stream !== 'events',
    workspaceRoot,
    tools: o.tools ?? [],
    builtinTools: o.builtinTools ?? false,
    seedFiles: o.seedFiles ?? {},
    only: o.only ?? null,
    mcp: o.mcp ?? null,
    ledger: o.ledger ?? { kind: 'folder', dir: join(workspaceRoot, '.ledger') },
    retention: {
      enabled: r.enabled ?? true,
      maxAgeMs: r.maxAgeMs ?? null,
      ledgerMaxBytes: r.ledgerMaxBytes ?? null,
      traceMaxBytes: r.traceMaxBytes ?? null,
      messageStoreMaxBytes: r.messageStoreMaxBytes ?? null,
      intervalMs: r.intervalMs ?? 3_600_000,
      logEveryPass: r.logEveryPass ?? false,
    },
    traceDir: resolve(o.traceDir ?? join(workspaceRoot, '.traces')),
    messageStoreDir: resolve(o.messageStoreDir ?? join(workspaceRoot, '.messages')),
    runDefaults: o.runDefaults ?? {},
    modelPrices: o.modelPrices ?? {},
    heartbeatEveryMs: o.heartbeatEveryMs ?? DEFAULT_HEARTBEAT_MS,
    ...(o.payloadKeys !== undefined ? { payloadKeys: o.payloadKeys } : {}),
    searchAttributes: o.searchAttributes ?? SEARCH_ATTRIBUTE_MODES[0],
    toolsetCheck: o.toolsetCheck ?? TOOLSET_CHECKS[0],
    ownQueue: o.ownQueue ?? false,
    tracing: o.tracing ?? null,
    log: o.log ?? runtimeLog(),
    notify: o.notify?.routes.length ? o.notify : null,
  };
}

/** The Temporal runtime's logger, read when a line is written (the team may install its runtime after making the plugin). */
function runtimeLog(): PluginLog {
  return {
    log: (line: string) => Runtime.instance().logger.info(line),
    warn: (line: string) => Runtime.instance().logger.warn(line),
  };
}

/** An EffectStore given in `ledger` (the caller's), rather than where to open one. */
export function isEffectStore(l: LedgerConfig | EffectStore): l is EffectStore {
  return typeof (l as Partial<EffectStore>).read === 'function';
}
