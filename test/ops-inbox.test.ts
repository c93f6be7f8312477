// The ops server's inbox page in the real headless Chromium, as a person uses
// it: open it with the token, import alice's key file (it stays in the page:
// WebCrypto, non-extractable), see a run that parks arrive, open it (the call,
// its arguments, its live stream), approve it — signed in the browser, checked
// by the run — and see it complete; then select 50 parked runs and approve
// them in one action, each signed on its own.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKeyPair, type ApproverPolicy } from '../common/signed-decision.js';
import { startOpsServer, type OpsServer } from '../client/ops-server.js';
import type { agentRun } from '../workflows/index.js';
import { launchChromium } from './helpers/browser.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';

const h = useHarness();
const alice = newKeyPair();
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
const TOKEN = `ops-${randomUUID()}`;
const queue = `ops-inbox-${randomUUID().slice(0, 8)}`;
let ops: OpsServer;
let worker: { shutdown(): Promise<void> };
let browser: Browser | undefined;

beforeAll(async () => {
  worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } });
  ops = await startOpsServer(0, '127.0.0.1', { client: h.client, token: TOKEN, approvers: policy });
});
afterAll(async () => {
  await browser?.close();
  await ops?.close();
  await worker?.shutdown();
});

const startParking = async () => {
  const ws = freshWorkspace();
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `inbox-${ws}`, args: [{ task: 'Delete the old logs.', model: 'destructive', workspace: ws }] });
  return { handle, ws };
};

/** The page, opened with the token in its fragment (never sent to the server), alice's key imported. */
async function openInbox(): Promise<Page> {
  browser ??= await launchChromium();
  const tab = await browser.newPage();
  await tab.goto(`${ops.url}/?taskQueue=${queue}#token=${TOKEN}`);
  // The fragment is wiped from the address bar once read.
  expect(tab.url()).not.toContain(TOKEN);
  await tab.type('#by', 'alice');
  await tab.$eval('#key', (el, text) => ((el as unknown as { value: string }).value = text), `# agent-harness keygen: alice\n${alice.privateKey}\n`);
  await tab.click('#import-key');
  await tab.waitForFunction('document.getElementById("key-state").textContent.startsWith("key imported")', { timeout: 30_000 });
  // The key left the text box: only the non-extractable CryptoKey holds it.
  expect(await tab.$eval('#key', (el) => (el as unknown as { value: string }).value)).toBe('');
  return tab;
}

const row = (id: string) => `tr[data-workflow-id="${id}"]`;

describe('the inbox page in a real browser', { timeout: 300_000 }, () => {
  it('a parked run arrives live; opened, it shows its call, arguments and stream; approved with a key that never leaves the page, it completes', async () => {
    const tab = await openInbox();
    const requests: string[] = [];
    tab.on('request', (r) => requests.push(`${r.method()} ${r.url()} ${r.postData() ?? ''}`));
    // Started after the page is open: it must arrive by itself.
    const { handle, ws } = await startParking();
    await tab.waitForSelector(row(handle.workflowId), { timeout: 90_000 });
    expect(await tab.$eval(`${row(handle.workflowId)} td:nth-child(4)`, (el) => el.textContent)).toBe('delete_file');
    expect(await tab.$eval(`${row(handle.workflowId)} td:nth-child(7)`, (el) => el.textContent)).toBe('alice');
    await tab.click(`${row(handle.workflowId)} td.wid`);
    await tab.waitForFunction('document.getElementById("d-call").textContent.startsWith("delete_file")', { timeout: 60_000 });
    expect(JSON.parse((await tab.$eval('#d-args', (el) => el.textContent)) ?? 'null')).toEqual({ path: 'access.log' });
    await tab.waitForFunction('[...document.querySelectorAll("#events li")].some((li) => / approval_required/.test(li.textContent))', { timeout: 60_000 });
    await tab.click('#approve');
    await tab.waitForSelector(`#answers li[data-workflow-id="${handle.workflowId}"][data-ok="true"]`, { timeout: 60_000 });
    // The live stream ends the run: completed.
    await tab.waitForFunction('document.getElementById("d-status").textContent === "completed"', { timeout: 60_000 });
    expect((await handle.result()).output).toBe('Deleted access.log to free space.');
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    // What went to the server: a signature, never the key.
    const sent = requests.join('\n');
    expect(sent).toMatch(/"signature":"[A-Za-z0-9+/]{86}=="/);
    expect(sent).not.toContain(alice.privateKey);
    await tab.close();
  });

  it('50 parked runs selected and approved in one action, each signed: every one completes', async () => {
    const tab = await openInbox();
    const runs = await Promise.all(Array.from({ length: 50 }, () => startParking()));
    const ids = runs.map((r) => r.handle.workflowId);
    const all = (selector: string) => `${JSON.stringify(ids)}.every((id) => document.querySelector(${JSON.stringify(selector)}.replace('ID', id)))`;
    await tab.waitForFunction(all('tr[data-workflow-id="ID"]'), { timeout: 180_000, polling: 500 });
    await tab.click('#select-all');
    const t0 = Date.now();
    await tab.click('#approve-selected');
    await tab.waitForFunction(all('#answers li[data-workflow-id="ID"]'), { timeout: 180_000, polling: 200 });
    const ms = Date.now() - t0;
    const refused = await tab.$$eval('#answers li[data-ok="false"]', (lis) => lis.map((li) => li.textContent));
    expect(refused).toEqual([]);
    const results = await Promise.all(runs.map((r) => r.handle.result()));
    expect(results.every((r) => r.output === 'Deleted access.log to free space.')).toBe(true);
    console.log(`inbox: 50 runs approved in one action in ${ms} ms (${((50 * 1000) / ms).toFixed(1)} runs/s, signing in the page included)`);
    await tab.close();
  });
});
