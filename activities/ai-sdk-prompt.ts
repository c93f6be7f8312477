// The transcript (../common/contract.ts, chat-completions shaped) as the AI SDK's
// provider prompt (LanguageModelV3Prompt, the specification @ai-sdk/provider
// 3 and its provider packages implement) and back, and a provider's result as
// the harness's reply. Pure: no I/O, no provider, types only from
// @ai-sdk/provider, so the model activity can convert and the tests can check
// every case in microseconds.
//
// What the prompt carries, exactly: system, user (the task, steered messages,
// summary and omission notes are user messages), assistant text, tool calls
// with their ids and arguments, tool results with their call ids and tool
// names, in order. What it cannot carry, so the round trip gives back
// something else (normalizeTranscript says what):
// - an assistant's empty text: '' and null both go as no text part (a
//   provider refuses an empty text block), and come back null;
// - nothing else: arguments that are not the canonical JSON of an object
//   (spacing, key order kept as written, broken JSON, a non-object) travel
//   beside the parsed input in providerOptions.agentHarness, which providers
//   ignore, so they come back exactly as written.
// Rejections and tool errors stay text in the harness's own words: a rejection
// is not sent as the SDK's `execution-denied` (that is for provider-executed
// tools, and the packages replace it with their own sentence), and an error
// result ("Error: …", ../common/transcript-text.ts) is sent as `error-text`, which
// Anthropic's package marks `is_error`.
import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3FunctionTool,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { AssistantMessage, ChatMessage, ToolCall } from '../common/contract.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';

/** The providerOptions key under which a tool call's arguments travel when the parsed input cannot say them exactly. */
export const HARNESS_OPTIONS_KEY = 'agentHarness';

/** The prefix of a tool result that reports a failure (toolErrorText): sent as `error-text`. */
const ERROR_PREFIX = 'Error: ';

/** A tool result as the harness sends it: text, or error text (never files or content lists). */
type TextResultOutput = Extract<LanguageModelV3ToolResultOutput, { type: 'text' | 'error-text' }>;

/**
 * One message of the prompt the harness sends: system text, user text,
 * assistant text and tool calls, text tool results. Both provider
 * specifications (V3 and V4) read these alike (they differ in files and
 * content lists, which a transcript never holds), so one prompt serves both.
 */
export type HarnessMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: LanguageModelV3TextPart[] }
  | { role: 'assistant'; content: (LanguageModelV3TextPart | LanguageModelV3ToolCallPart)[] }
  | { role: 'tool'; content: (Omit<LanguageModelV3ToolResultPart, 'output'> & { output: TextResultOutput })[] };

/** The prompt the harness sends, a V3 and a V4 prompt at once. */
export type HarnessPrompt = HarnessMessage[];

/** The transcript as the provider's prompt: same messages, same order, consecutive tool results in one tool message. */
export function toPrompt(messages: readonly ChatMessage[]): HarnessPrompt {
  const prompt: HarnessMessage[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        prompt.push({ role: 'system', content: m.content });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
        break;
      case 'assistant':
        prompt.push({
          role: 'assistant',
          content: [...(m.content ? [{ type: 'text' as const, text: m.content }] : []), ...(m.tool_calls ?? []).map(toolCallPart)],
        });
        break;
      case 'tool': {
        const part = { type: 'tool-result' as const, toolCallId: m.tool_call_id, toolName: m.name, output: resultOutput(m.content) };
        const last = prompt.at(-1);
        // The SDK's shape: the results of one turn in one tool message.
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/**
 * The prompt back as a transcript: the inverse of toPrompt on what it makes.
 * Of other prompts, what a transcript cannot hold is dropped: files,
 * reasoning, provider-executed results, approval responses; several text
 * parts of one message are joined.
 */
export function fromPrompt(prompt: LanguageModelV3Prompt): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of prompt) {
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: m.content });
        break;
      case 'user':
        out.push({ role: 'user', content: m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n') });
        break;
      case 'assistant': {
        const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
        const calls = m.content.flatMap((p) => (p.type === 'tool-call' && !p.providerExecuted ? [toolCallOf(p)] : []));
        out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
        break;
      }
      case 'tool':
        for (const p of m.content) {
          if (p.type === 'tool-result') out.push({ role: 'tool', tool_call_id: p.toolCallId, name: p.toolName, content: outputText(p.output) });
        }
        break;
    }
  }
  return out;
}

/** What fromPrompt(toPrompt(t)) gives back: t, with an assistant's empty text as null. */
export function normalizeTranscript(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => (m.role === 'assistant' && m.content === '' ? { ...m, content: null } : m));
}

/** The run's tool definitions as the SDK's function tools. */
export function toFunctionTools(defs: readonly OpenAiToolDefinition[]): LanguageModelV3FunctionTool[] {
  // Our schema type leaves keyword values open (unknown); the SDK's JSON Schema 7 type names each one. Same JSON.
  return defs.map((d) => ({ type: 'function', name: d.function.name, description: d.function.description, inputSchema: d.function.parameters as LanguageModelV3FunctionTool['inputSchema'] }));
}

/** Token counts of one reply as a provider reports them; the cache and reasoning counts only when it does. */
export interface ProviderUsage {
  /** Every input token, cached ones included. */
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Part of completionTokens. */
  reasoningTokens?: number;
}

export interface ProviderReply {
  message: AssistantMessage;
  /** In the chat-completions words the harness has always recorded: stop, length, tool_calls, content_filter, … */
  finishReason: string;
  /** Null when the provider reported no totals: the caller counts them itself (o200k_base) and says so. */
  usage: ProviderUsage | null;
}

/**
 * A provider's result as the harness's reply: the text parts joined in
 * order, the tool calls with their ids and arguments (JSON text, as the
 * provider sent it), the finish reason and usage. Reasoning text, sources,
 * files and provider-executed tool calls and results have no place in the
 * transcript and are left out (reasoning tokens stay in the usage).
 */
export function replyOf(result: { content: readonly LanguageModelV3Content[]; finishReason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage }): ProviderReply {
  const text = result.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const calls: ToolCall[] = result.content.flatMap((p) =>
    p.type === 'tool-call' && !p.providerExecuted ? [{ id: p.toolCallId, type: 'function' as const, function: { name: p.toolName, arguments: p.input } }] : [],
  );
  return {
    message: { role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) },
    finishReason: finishReasonOf(result.finishReason),
    usage: usageOf(result.usage),
  };
}

const FINISH: Record<LanguageModelV3FinishReason['unified'], string> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  'content-filter': 'content_filter',
  error: 'error',
  other: 'other',
};

/** The unified reason in chat-completions words; `other` says the provider's own word when it gave one. */
export function finishReasonOf(r: LanguageModelV3FinishReason): string {
  return r.unified === 'other' && r.raw ? r.raw : FINISH[r.unified];
}

export function usageOf(u: LanguageModelV3Usage): ProviderUsage | null {
  const prompt = u.inputTokens.total;
  const completion = u.outputTokens.total;
  if (!isCount(prompt) || !isCount(completion)) return null;
  return {
    promptTokens: prompt,
    completionTokens: completion,
    ...(isCount(u.inputTokens.cacheRead) ? { cacheReadTokens: u.inputTokens.cacheRead } : {}),
    ...(isCount(u.inputTokens.cacheWrite) ? { cacheWriteTokens: u.inputTokens.cacheWrite } : {}),
    ...(isCount(u.outputTokens.reasoning) ? { reasoningTokens: u.outputTokens.reasoning } : {}),
  };
}

const isCount = (v: number | undefined): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function toolCallPart(c: ToolCall): LanguageModelV3ToolCallPart {
  const input = parseObject(c.function.arguments);
  // Nested thousands deep (a model's arguments the workflow refused for their depth), the parsed
  // input cannot be encoded again (JSON.stringify overflows the stack), by us or by a provider package:
  // it goes as {}, its text beside it, so the next turn is sent instead of failing as an outage.
  let encoded: string | null = null;
  try {
    encoded = input === null ? null : JSON.stringify(input);
  } catch {
    encoded = null;
  }
  // Arguments the parsed input would not give back byte for byte travel beside it.
  const exact = encoded !== null && encoded === c.function.arguments;
  return {
    type: 'tool-call',
    toolCallId: c.id,
    toolName: c.function.name,
    // Providers want an object (Anthropic's tool_use.input is one); broken arguments go as {}.
    input: encoded !== null && input !== null ? input : {},
    ...(exact ? {} : { providerOptions: { [HARNESS_OPTIONS_KEY]: { arguments: c.function.arguments } } }),
  };
}

function toolCallOf(p: LanguageModelV3ToolCallPart): ToolCall {
  const raw = p.providerOptions?.[HARNESS_OPTIONS_KEY]?.arguments;
  return { id: p.toolCallId, type: 'function', function: { name: p.toolName, arguments: typeof raw === 'string' ? raw : JSON.stringify(p.input ?? {}) } };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function resultOutput(content: string): TextResultOutput {
  return content.startsWith(ERROR_PREFIX) ? { type: 'error-text', value: content } : { type: 'text', value: content };
}

function outputText(o: LanguageModelV3ToolResultOutput): string {
  switch (o.type) {
    case 'text':
    case 'error-text':
      return o.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value);
    case 'execution-denied':
      return o.reason ?? 'The tool call was denied.';
    case 'content':
      return o.value.flatMap((v) => (v.type === 'text' ? [v.text] : [])).join('\n');
  }
}
