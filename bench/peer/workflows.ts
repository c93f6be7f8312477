// The closest peer, for the benchmark only: the same agent (the scripted
// provider's scenario, the same list_files and read_file tools) written the way
// @temporalio/ai-sdk intends — the Vercel AI SDK's generateText loop running
// inside a workflow, each model call an activity through TemporalProvider,
// each tool call an activity of ours.
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import type { PeerActivities } from './activities';

const { peerListFiles, peerReadFile } = proxyActivities<PeerActivities>({ startToCloseTimeout: '1 minute' });

export async function peerAgent(task: string, model: string, maxSteps: number): Promise<{ steps: number; text: string }> {
  const result = await generateText({
    model: temporalProvider.languageModel(model),
    prompt: task,
    tools: {
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
    },
    stopWhen: stepCountIs(maxSteps),
  });
  return { steps: result.steps.length, text: result.text };
}
