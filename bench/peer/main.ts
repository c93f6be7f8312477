// The peer's worker process: the AI SDK plugin with the OpenAI provider on the
// chat-completions endpoint of the same scripted provider, on the same
// Temporal server as ours (LLM_API_KEY: the provider's key, if it wants one).
// Started by bench/peer-process.ts; prints "peer ready".
import { createOpenAI } from '@ai-sdk/openai';
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createPeerActivities } from './activities';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

/** The OpenAI provider, always on the chat-completions endpoint (the one the scripted provider serves). */
function chatCompletions(baseURL: string, apiKey: string): ProviderV4 {
  const openai = createOpenAI({ baseURL, apiKey });
  return { ...openai, specificationVersion: 'v4', languageModel: (id: string) => openai.chat(id) } as ProviderV4;
}

Runtime.install({ logger: new DefaultLogger('ERROR') });
const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
const worker = await Worker.create({
  connection,
  taskQueue: env('PEER_TASK_QUEUE'),
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities: createPeerActivities(env('AGENT_WORKSPACE')),
  plugins: [new AiSdkPlugin({ modelProvider: chatCompletions(env('LLM_BASE_URL'), process.env.LLM_API_KEY ?? 'unused') })],
});
console.log('peer ready');
await worker.run();
await connection.close();
