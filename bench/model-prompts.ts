// The model calls the provider benches time: the first turn of a two-tool
// task, and its third (two calls and their results in the prompt). One
// definition, so the benches measure the same requests.
import type { ChatMessage } from '../common/contract.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import { toolMessage } from '../common/transcript-text.js';

export const TOOLS: OpenAiToolDefinition[] = [
  { type: 'function', function: { name: 'list_files', description: 'List the workspace files.', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'read_file', description: 'Read one file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
];
const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });
export const TURN0: ChatMessage[] = [
  { role: 'system', content: 'You are a careful agent.' },
  { role: 'user', content: 'Which file mentions a timeout?' },
];
export const TURN2: ChatMessage[] = [
  ...TURN0,
  { role: 'assistant', content: null, tool_calls: [call('c1', 'list_files', '{}')] },
  toolMessage('c1', 'list_files', 'errors.log\naccess.log\nnotes.txt'),
  { role: 'assistant', content: null, tool_calls: [call('c2', 'read_file', '{"path":"errors.log"}')] },
  toolMessage('c2', 'read_file', 'worker 7 timed out after 30000 ms'),
];
