// research: a tool that is a whole child agent run (its own transcript, turn
// cap and budget, paid from the parent's), with list_files and read_file.
// The workflow starts the child; no activity runs it.
import { defineSubAgent } from './define-tool.js';

export default defineSubAgent({
  name: 'research',
  description: 'Delegate a research question to a sub-agent that can list and read files.',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', minLength: 1, maxLength: 2000 } },
    required: ['question'],
    additionalProperties: false,
  },
  readOnly: true,
  // Offered only to runs that ask for it by name.
  enabledByDefault: false,
  origin: 'builtin',
  // No `limits`: each child takes SUB_AGENT_LIMITS (6 turns, at most $0.05, never more than the parent has left).
  subAgent: { taskArgument: 'question', tools: ['list_files', 'read_file'] },
});
