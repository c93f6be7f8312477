// Starts what every test file shares: a real Temporal dev server (the CLI
// that `npm install` provisioned, in memory, on a free port) with its Web UI
// on another free port, calling the codec server started here to show
// compressed payloads; the real scripted provider over HTTP; one workflow
// bundle; and a real model's files.
import { bundleWorkflowCode } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { startCodecServer } from '../client/codec-server.js';
import { parsePayloadKeys } from '../node/payload-keys.js';
import { provisionLocalModel, type LocalModelFiles } from '../dev/model/local-model.js';
import { startProvider } from '../dev/provider/server.js';
import { WORKFLOWS_PATH } from '../worker/create-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    providerUrl: string;
    workflowBundlePath: string;
    localModelFiles: LocalModelFiles;
    /** The dev server's Web UI, e.g. http://127.0.0.1:40123 (test/web-ui-browser.test.ts). */
    webUiUrl: string;
    /** The codec server the Web UI calls from the browser to decode payloads. */
    codecUrl: string;
    /** The bearer token that codec server requires (AGENT_CODEC_TOKEN as ops would set it). */
    codecToken: string;
    /** Payload keys the codec server decrypts with, as AGENT_PAYLOAD_KEYS text: a file that encrypts its runs uses them (test/web-ui-browser.test.ts). */
    payloadKeys: string;
  }
}

export const SUGGEST_CONTINUE_AS_NEW_AT_EVENTS = 150;

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-harness-test-'));
  // The UI as ops run it (`npm start`): its codec endpoint set, and the codec
  // server answering only the UI's own origin, as CODEC_ALLOW_ORIGIN would,
  // with a token, and able to decrypt what a file encrypting its runs writes
  // (the rest of the suite writes no encrypted payload: the keys are not in its environment).
  const uiPort = await findFreePort();
  const webUiUrl = `http://127.0.0.1:${uiPort}`;
  const codecToken = randomBytes(24).toString('base64url');
  const payloadKeys = `suite-key:${randomBytes(32).toString('base64')}`;
  const codec = await startCodecServer(0, '127.0.0.1', { allowOrigins: [webUiUrl], token: codecToken, payloadKeys: parsePayloadKeys(payloadKeys) });
  const server = await startDevServer({
    port: await findFreePort(),
    uiPort,
    uiCodecEndpoint: codec.url,
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
  project.provide('webUiUrl', webUiUrl);
  project.provide('codecUrl', codec.url);
  project.provide('codecToken', codecToken);
  project.provide('payloadKeys', payloadKeys);

  return async () => {
    await provider.close();
    await server.stop();
    await new Promise<void>((resolve) => codec.server.close(() => resolve()));
  };
}

const noop = () => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
