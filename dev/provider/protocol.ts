// The two rules of the chat-completions protocol, checked like a real API
// checks them: a tool result must answer a call of the assistant message just
// before it, and every call must have its result before the next turn.
import type { WireMessage } from '../../node/tokens.js';

interface WireCall {
  id?: unknown;
}

export function protocolError(messages: WireMessage[]): string | null {
  let open: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const id = m.tool_call_id;
      if (typeof id !== 'string' || !open.includes(id)) {
        return `messages[${i}]: a tool message with tool_call_id ${JSON.stringify(id)} must follow the assistant message whose tool_calls contain that id`;
      }
      open = open.filter((x) => x !== id);
      continue;
    }
    if (open.length) {
      return `messages[${i}]: the tool_calls ${open.join(', ')} of an earlier assistant message have no tool result`;
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      open = m.tool_calls.map((c) => String((c as WireCall).id));
    }
  }
  if (open.length) return `the tool_calls ${open.join(', ')} of the last assistant message have no tool result`;
  return null;
}
