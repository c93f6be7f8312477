// A request to the scripted provider in one shape whatever its protocol: its
// messages as chat completions would carry them (an Anthropic request is
// converted by ./anthropic.ts), so the scenarios, the protocol check, the
// token counts and the fault matching are written once.
import { omittedTurns } from '../../common/context-window.js';
import type { WireMessage } from '../../node/tokens.js';
import type { ScriptInput } from './scenarios.js';

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

/** What a scenario reads of a request: the turn, what the tools returned, the tools offered and the task. */
export function scriptInputOf(messages: WireMessage[], tools: unknown[] | undefined): ScriptInput {
  return {
    turn: turnOf(messages),
    toolText: messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content ?? '')
      .join('\n'),
    toolNames: (tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name ?? ''),
    task: messages.find((m) => m.role === 'user')?.content ?? '',
  };
}

/**
 * The turn index: assistant messages so far, plus the turns a harness dropped
 * to fit a context window and said so in a note, so a long run keeps counting
 * — and keeps its call ids unique — after a cut.
 */
export function turnOf(messages: WireMessage[]): number {
  return messages.filter((m) => m.role === 'assistant').length + omittedTurns(messages);
}
