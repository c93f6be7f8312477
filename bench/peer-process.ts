// The peer's worker process (bench/peer): the same agent on @temporalio/ai-sdk,
// on the same server as ours, task queue `peer`.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PROJECT_ROOT } from '../node/project-root.js';
import type { Client } from '@temporalio/client';
import type { BenchStack } from './stack.js';

export const PEER_TASK_QUEUE = 'peer';

/**
 * The peer runs in its own process from its own package (bench/peer), with
 * @temporalio/* 1.23 as @temporalio/ai-sdk requires: two copies of
 * @temporalio/proto cannot share a process. Installed on first use.
 */
export async function startPeer(stack: BenchStack): Promise<ChildProcess> {
  const dir = `${PROJECT_ROOT}/bench/peer`;
  if (!existsSync(`${dir}/node_modules/@temporalio/ai-sdk`)) execSync('npm install --no-audit --no-fund', { cwd: dir, stdio: 'inherit' });
  const child = spawn(process.execPath, ['--import', 'tsx', `${dir}/main.ts`], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: stack.address, PEER_TASK_QUEUE, LLM_BASE_URL: stack.providerUrl, ...(stack.providerApiKey ? { LLM_API_KEY: stack.providerApiKey } : {}), AGENT_WORKSPACE: stack.workspaceRoot },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => b.toString().includes('peer ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the peer worker exited with ${code}`)));
  });
  return child;
}

/** One run of the peer's agent on `model`, up to `maxSteps` steps; the steps it took. */
export async function runPeer(client: Client, workflowId: string, model: string, maxSteps: number): Promise<number> {
  const r = (await client.workflow.execute('peerAgent', { taskQueue: PEER_TASK_QUEUE, workflowId, args: ['Keep listing files.', model, maxSteps] })) as { steps: number };
  return r.steps;
}
