// The floor of the comparison: the same agent as a plain in-process loop — the
// same scripted provider over HTTP, the same tool implementation, no Temporal,
// no durability. What our harness costs per turn is measured against this.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainToolContext } from '../activities/tools/context.js';
import { listFiles } from '../activities/tools/list-files.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { toolSpecOf } from '../activities/tools/define-tool.js';
import { toolDefinitions } from '../common/tool-spec.js';
import type { ChatMessage, ToolCall } from '../common/contract.js';

/** `apiKey`: sent as chat completions carry it, for a provider started with one. */
export async function runFloor(providerUrl: string, model: string, maxTurns: number, apiKey?: string): Promise<{ turns: number }> {
  const base = mkdtempSync(join(tmpdir(), 'floor-'));
  const ctx = plainToolContext(base);
  const messages: ChatMessage[] = [{ role: 'user', content: 'Keep listing files.' }];
  const tools = toolDefinitions(BUILTIN_TOOLS.filter((t) => t.enabledByDefault !== false).map(toolSpecOf));
  let turns = 0;
  while (turns < maxTurns) {
    const res = await fetch(`${providerUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model, messages, tools }),
    });
    const body = (await res.json()) as { choices: { message: { content: string | null; tool_calls?: ToolCall[] } }[] };
    turns += 1;
    const msg = body.choices[0].message;
    messages.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls });
    if (!msg.tool_calls?.length) break;
    for (const c of msg.tool_calls) messages.push({ role: 'tool', tool_call_id: c.id, name: c.function.name, content: await listFiles(ctx, {}) });
  }
  return { turns };
}
