// A request to the scripted provider in one shape whatever its protocol: its
// messages as chat completions would carry them (an Anthropic request is
// converted by ./anthropic.ts), so the scenarios, the protocol check, the
// token counts and the fault matching are written once. The same shape is
// what the request log keeps of a body and what a scenario is handed, so a
// team's test reads one shape on either protocol.
import { omittedTurns } from '../../common/context-window.js';
import type { WireMessage } from '../../node/tokens.js';
import type { ScriptInput } from './scenarios.js';

/** The request's protocol: `chat` (OpenAI's POST /v1/chat/completions) or `anthropic` (POST /v1/messages). */
export type Protocol = 'chat' | 'anthropic';

export interface ScriptedRequest {
  protocol: Protocol;
  model: string;
  /** The conversation as chat-completions messages, the system prompt first when there is one. */
  messages: WireMessage[];
  /** Tool definitions in chat-completions shape (`{type: "function", function: {name, description, parameters}}`). */
  tools: unknown[] | undefined;
  maxTokens: number | null;
  stream: boolean;
  /** Chat completions only: `stream_options.include_usage`. Anthropic streams always carry usage. */
  includeUsage: boolean;
  /**
   * The request's other fields, in the protocol's own names, as received:
   * sampling and tool choice (`temperature`, `top_p`/`stop`/`seed`/`tool_choice`,
   * Anthropic's `stop_sequences`), `max_tokens`, `response_format` or
   * `output_format`, provider-specific extras. A test reads what a run's
   * modelSettings and outputSchema made of the request here.
   */
  options: Record<string, unknown>;
}

/** A request body's fields besides those the request's shape already names (`omit`). */
export function optionsOf(body: object, omit: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k]) => !omit.includes(k)));
}

/**
 * One message of a request as the testing kit shows it, whatever the
 * protocol: chat completions' shape. An Anthropic request's `system` is the
 * first message (role `system`), each `tool_result` block a `tool` message,
 * each `tool_use` block an entry of `tool_calls` (arguments as JSON text);
 * content given as an array of text parts is joined into one string.
 */
export interface SeenMessage {
  /** `system`, `user`, `assistant` or `tool` (chat completions may also send `developer`). */
  role: string;
  /** The text; null for an assistant message that only calls tools. */
  content: string | null;
  /** A tool message: the id of the call it answers. */
  tool_call_id?: string;
  /** An assistant message's calls: `{ id, type: 'function', function: { name, arguments } }`. */
  tool_calls?: unknown[];
  /** A message's `name`, when the request gave one. */
  name?: string;
}

/** A tool definition the request offered, whatever the protocol (Anthropic's `input_schema` is `parameters`). */
export interface SeenTool {
  /** The tool's name. */
  name: string;
  /** Its description, as the model reads it. */
  description?: string;
  /** The tool's JSON Schema, as sent. */
  parameters?: unknown;
}

/**
 * The model settings a request carried, under one name whatever the
 * protocol, each value exactly as sent (the kit checks none of them but
 * `max_tokens`). A field the request did not send is absent.
 */
export interface RequestSettings {
  /** `temperature`. */
  temperature?: unknown;
  /** `top_p`. */
  topP?: unknown;
  /** `top_k` (Anthropic; some OpenAI-compatible servers). */
  topK?: unknown;
  /** `max_tokens` (chat completions' `max_completion_tokens` too). */
  maxTokens?: unknown;
  /** Chat completions' `stop`, Anthropic's `stop_sequences`. */
  stopSequences?: unknown;
  /** `seed` (chat completions). */
  seed?: unknown;
  /** `tool_choice`, in the protocol's own form (`"required"`, or Anthropic's `{ type: "any" }`). */
  toolChoice?: unknown;
  /** Chat completions' `response_format`; Anthropic's `output_config.format` or `output_format`. */
  responseFormat?: unknown;
  /**
   * Every other top-level field of the body, by its wire name: provider
   * options such as Anthropic's `thinking` or OpenAI's `reasoning_effort`.
   * (`model`, `messages`, `system`, `tools`, `stream` and `stream_options`
   * have fields of their own.)
   */
  other: Record<string, unknown>;
}

/** A request's body as the testing kit logs it and hands it to a scenario: one shape for both protocols. */
export interface RequestBody {
  /** `chat` (POST /v1/chat/completions) or `anthropic` (POST /v1/messages). */
  protocol: Protocol;
  /** The request's `model`: the scenario's name. */
  model: string;
  /** The system prompt: Anthropic's `system`, or the chat request's system (and developer) messages joined; null when none. */
  system: string | null;
  /** The conversation, the system prompt first when there is one. */
  messages: SeenMessage[];
  /** The tools offered, in order. */
  tools: SeenTool[];
  /** Temperature, top-p, max tokens, stop sequences, seed, tool choice, response format and the rest. */
  settings: RequestSettings;
  /** It asked for a streamed reply. */
  stream: boolean;
}

/** The body of a parsed request, in the kit's one shape; `raw` is the JSON it came from (for the settings). */
export function requestBodyOf(request: ScriptedRequest, raw: unknown): RequestBody {
  const messages = request.messages.map(seenMessage);
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content ?? '');
  return {
    protocol: request.protocol,
    model: request.model,
    system: system.length ? system.join('\n') : null,
    messages,
    tools: (request.tools ?? []).map(seenTool),
    settings: settingsOf(request.protocol, raw),
    stream: request.stream,
  };
}

/** What a scenario reads of a request: the turn, what the tools returned, the tools offered, the task, and the whole body. */
export function scriptInputOf(body: RequestBody): ScriptInput {
  return {
    turn: turnOf(body.messages),
    toolText: body.messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content ?? '')
      .join('\n'),
    toolNames: body.tools.map((t) => t.name),
    task: body.messages.find((m) => m.role === 'user')?.content ?? '',
    system: body.system,
    messages: body.messages,
    tools: body.tools,
    settings: body.settings,
  };
}

/**
 * The turn index: assistant messages so far, plus the turns a harness dropped
 * to fit a context window and said so in a note, so a long run keeps counting
 * — and keeps its call ids unique — after a cut.
 */
export function turnOf(messages: readonly { role: string; content?: string | null }[]): number {
  return messages.filter((m) => m.role === 'assistant').length + omittedTurns(messages as WireMessage[]);
}

function seenMessage(m: WireMessage): SeenMessage {
  const raw = m as { role?: unknown; content?: unknown; name?: unknown; tool_call_id?: unknown; tool_calls?: unknown };
  return {
    role: String(raw.role),
    content: raw.content === null || raw.content === undefined ? null : textOf(raw.content),
    ...(typeof raw.tool_call_id === 'string' ? { tool_call_id: raw.tool_call_id } : {}),
    ...(Array.isArray(raw.tool_calls) ? { tool_calls: raw.tool_calls as unknown[] } : {}),
    ...(typeof raw.name === 'string' ? { name: raw.name } : {}),
  };
}

function seenTool(t: unknown): SeenTool {
  const fn = ((t as { function?: unknown } | null)?.function ?? {}) as { name?: unknown; description?: unknown; parameters?: unknown };
  return {
    name: typeof fn.name === 'string' ? fn.name : '',
    ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
    ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
  };
}

/** A string, or an array of text parts (`{type: 'text', text}`) joined; anything else as JSON. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) => (typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('');
  }
  return JSON.stringify(content);
}

/** The body's fields each protocol names its own way, under the kit's one name. */
const SETTING_NAMES: Record<Protocol, Record<string, keyof Omit<RequestSettings, 'other'>>> = {
  chat: {
    temperature: 'temperature',
    top_p: 'topP',
    top_k: 'topK',
    max_tokens: 'maxTokens',
    max_completion_tokens: 'maxTokens',
    stop: 'stopSequences',
    seed: 'seed',
    tool_choice: 'toolChoice',
    response_format: 'responseFormat',
  },
  anthropic: {
    temperature: 'temperature',
    top_p: 'topP',
    top_k: 'topK',
    max_tokens: 'maxTokens',
    stop_sequences: 'stopSequences',
    tool_choice: 'toolChoice',
    output_format: 'responseFormat',
  },
};
/** Fields the body shape carries elsewhere. */
const NOT_SETTINGS = new Set(['model', 'messages', 'system', 'tools', 'stream', 'stream_options']);

function settingsOf(protocol: Protocol, raw: unknown): RequestSettings {
  const settings: RequestSettings = { other: {} };
  if (typeof raw !== 'object' || raw === null) return settings;
  const names = SETTING_NAMES[protocol];
  for (const [key, value] of Object.entries(raw)) {
    if (NOT_SETTINGS.has(key)) continue;
    const name = Object.hasOwn(names, key) ? names[key] : undefined;
    if (name) settings[name] = value;
    else if (protocol === 'anthropic' && key === 'output_config' && typeof value === 'object' && value !== null && 'format' in value) {
      // Anthropic's structured output: output_config.format; the rest of output_config (effort) stays in `other`.
      const { format, ...rest } = value as { format: unknown };
      settings.responseFormat = format;
      if (Object.keys(rest).length) defineField(settings.other, key, rest);
    } else defineField(settings.other, key, value);
  }
  return settings;
}

/** A field named by the request (`__proto__` included) as an own property, never a prototype. */
function defineField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
