// Starts what every test file shares: a real Temporal dev server (the CLI
// that `npm install` provisioned, in memory, on a free port), the real
// scripted provider over HTTP, one workflow bundle, and a real model's files.
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { findFreePort, startDevServer } from '../server/dev-server';
import { provisionLocalModel, type LocalModelFiles } from '../model/local-model';
import { startProvider } from '../provider/server';
import { WORKFLOWS_PATH } from '../worker/create-worker';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    providerUrl: string;
    workflowBundlePath: string;
    localModelFiles: LocalModelFiles;
  }
}

export const SUGGEST_CONTINUE_AS_NEW_AT_EVENTS = 150;

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-harness-test-'));
  const server = await startDevServer({
    port: await findFreePort(),
    uiPort: null,
    dbFile: null,
    logFile: join(dir, 'temporal-server.log'),
    startTimeoutMs: 90_000,
    // Temporal suggests continue-as-new at 4,096 events by default; at 150 a
    // long test run (about 25 turns) crosses it, short scenarios never do.
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_CONTINUE_AS_NEW_AT_EVENTS },
  });
  // The real model's files (test/real-model.test.ts): fetched and built once
  // per machine — about 7 minutes the first time, a file check after that.
  const localModelFiles = await provisionLocalModel();
  const provider = await startProvider();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);

  project.provide('temporalAddress', server.address);
  project.provide('providerUrl', provider.url);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('localModelFiles', localModelFiles);

  return async () => {
    await provider.close();
    await server.stop();
  };
}

const noop = () => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
