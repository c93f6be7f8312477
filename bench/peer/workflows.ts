// The closest peer, for the benchmark only: the same agent (the scripted
// provider's scenario, the same list_files and read_file tools) written the way
// @temporalio/ai-sdk intends — the Vercel AI SDK's generateText loop running
// inside a workflow, each model call an activity through TemporalProvider,
// each tool call an activity of ours.
import { TemporalProvider, temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { WorkflowStream } from '@temporalio/workflow-streams/workflow';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import type { PeerActivities } from './activities';

const { peerListFiles, peerReadFile } = proxyActivities<PeerActivities>({ startToCloseTimeout: '1 minute' });

export async function peerAgent(task: string, model: string, maxSteps: number): Promise<{ steps: number; text: string }> {
  const result = await generateText({
    model: temporalProvider.languageModel(model),
    prompt: task,
    tools: peerTools(),
    stopWhen: stepCountIs(maxSteps),
  });
  return { steps: result.steps.length, text: result.text };
}

/**
 * The same agent streaming, as @temporalio/ai-sdk streams: streamText through a
 * TemporalProvider whose language models have a `streamingTopic`, so each
 * model call runs its streaming activity, which publishes the stream's parts
 * on the workflow's stream (@temporalio/workflow-streams, hosted here so a
 * reader can subscribe) while the loop reads the accumulated reply.
 */
export async function peerAgentStreamed(task: string, model: string, maxSteps: number): Promise<{ steps: number; text: string }> {
  new WorkflowStream();
  const provider = new TemporalProvider({ languageModel: { streamingTopic: 'tokens' } });
  const result = streamText({
    model: provider.languageModel(model),
    prompt: task,
    tools: peerTools(),
    stopWhen: stepCountIs(maxSteps),
  });
  const [steps, text] = await Promise.all([result.steps, result.text]);
  return { steps: steps.length, text };
}

/** The agent's two tools, each call an activity of the peer's worker. */
function peerTools() {
  return {
    list_files: tool({
      description: 'List the files in the workspace with their sizes in bytes.',
      inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {}, additionalProperties: false }),
      execute: async () => peerListFiles(),
    }),
    read_file: tool({
      description: 'Read a text file from the workspace.',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string', minLength: 1 } }, required: ['path'], additionalProperties: false }),
      execute: async ({ path }) => peerReadFile(path),
    }),
  };
}
