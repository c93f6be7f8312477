// A deployment's own tools, as one module: what docs/tools.md and the README's
// "Your own tool" walk through. Offer them with
//   AGENT_TOOLS_MODULES=examples/tools/notes.ts npm run worker
// or, in a team's own worker, as values: new AgentPlugin({ tools: [writeNote, countWords], ... }),
// and name them in a run's input: {"task": "...", "tools": ["write_note", "count_words"]}.
// The public tools entry (`temporal-agent-harness/tools` in a project of its own).
// Files go through ctx.files, never node:fs: it keeps every path inside the
// workspace, through links, past secrets, and within the approval the call got.
import { defineTool, PATH_ARG } from '../../activities/tools/index.js';

/**
 * A write: asks a person unless the note goes under tmp/. The harness claims
 * each call before `run` and records its result after (the effect protocol),
 * so a retried call never writes twice; `ctx.effect.confirm()` checks the
 * claim once more right before the file changes.
 */
export const writeNote = defineTool({
  name: 'write_note',
  description: 'Write a text note to a file of the workspace (replacing it). Notes outside tmp/ need a person\'s approval.',
  parameters: {
    type: 'object',
    properties: { path: PATH_ARG, text: { type: 'string', maxLength: 20_000 } },
    required: ['path', 'text'],
    additionalProperties: false,
  },
  readOnly: false,
  pastTense: 'written',
  // Data, evaluated by the workflow on each call: "tmp/../x" counts as outside tmp/.
  needsApproval: { argument: 'path', unlessInside: ['tmp'] },
  activity: { startToCloseTimeoutMs: 10_000, retry: { maximumAttempts: 3 } },
  // `path` and `text` are typed from `parameters`, and checked against it before `run` is called.
  async run(ctx, { path: rel, text }) {
    await ctx.effect.confirm();
    // Resolved, judged (inside the workspace, not a secret, within the approval
    // this call got), opened without following links and checked on the open
    // file. A refusal throws NothingChanged: nothing was written, the claim is
    // released and the model reads why.
    await ctx.files.write(rel, text, { createFolders: true });
    return `wrote ${text.length} characters to ${rel}`;
  },
});

/** Fast and read-only: a local activity, and its result may be reused by the dedupe gate. */
export const countWords = defineTool({
  name: 'count_words',
  description: 'Count the words of a text file of the workspace.',
  parameters: { type: 'object', properties: { path: PATH_ARG }, required: ['path'], additionalProperties: false },
  readOnly: true,
  activity: { local: true },
  async run(ctx, { path: rel }) {
    // A regular file of the workspace only (a FIFO is refused, never waited on), at most 1 MiB of it.
    const { text, truncated } = await ctx.files.read(rel);
    const words = text.split(/\s+/u).filter((w) => w !== '').length;
    return truncated ? `${rel}: ${words} words in its first MiB` : `${rel}: ${words} words`;
  },
});

export default [writeNote, countWords];
