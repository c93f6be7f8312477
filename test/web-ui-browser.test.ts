// The Web UI, looked at in a real headless Chromium against the suite's dev
// server: a run parked on an approval is found in the workflows list by its
// AgentStatus, and its page shows its summary and live details and its input
// decoded by the codec server. The file's runs are encrypted (the suite's
// payload keys) and the input is over 32 KiB, so the client gzipped, then
// encrypted it: Temporal itself holds only `binary/encrypted` bytes, and the
// browser's calls to the codec server carry its bearer token. Screenshots of
// the list, the run and its details go to .data/screenshots/.
// Without a browser this test fails, saying how to install one.
import type { Page } from 'puppeteer-core';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import type { AgentInput } from '../common/contract.js';
import { GZIP_ENCODING, DEFAULT_COMPRESS_ABOVE_BYTES, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../node/payload-codec.js';
import { parsePayloadKeys } from '../node/payload-keys.js';
import { summaryOf } from '../client/follow.js';
import { launchChromium, pngSize } from './helpers/browser.js';
import { freshWorkspace, marker, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ payloadKeys: parsePayloadKeys(inject('payloadKeys')) });
const webUi = inject('webUiUrl');
const codecUrl = inject('codecUrl');
const codecToken = inject('codecToken');
const SHOTS = fileURLToPath(new URL('../.data/screenshots/', import.meta.url));
const VIEWPORT = { width: 1400, height: 1000 };
// The browser globals the page functions below read: the project's `lib` has
// no DOM (nothing else runs in a browser), so these are declared here.
interface PageElement {
  innerText: string;
  closest(selector: string): PageElement | null;
}
declare const document: { body: PageElement | null; querySelector(selector: string): PageElement | null };

/** Page loads and UI polling on a loaded 2-core machine: a safety net, not a speed check. */
const PAGE_TIMEOUT_MS = 120_000;

/** Waits until the page's own text (not its iframes') contains `text`; on timeout, says what it showed. */
async function waitForText(page: Page, text: string): Promise<string> {
  try {
    await page.waitForFunction((t: string) => document.body?.innerText.includes(t), { timeout: PAGE_TIMEOUT_MS, polling: 250 }, text);
  } catch (err) {
    const shown = await page.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    throw new Error(`${page.url()} never showed ${JSON.stringify(text)} (${String(err)}); it showed:\n${shown.slice(0, 2000)}`);
  }
  return page.evaluate(() => document.body?.innerText ?? '');
}

/** The text of the page's iframes: the UI renders a run's summary and details (markdown) in sandboxed frames. */
async function frameTexts(page: Page): Promise<string[]> {
  const texts = await Promise.all(page.frames().filter((f) => f !== page.mainFrame()).map((f) => f.evaluate(() => document.body?.innerText ?? '').catch(() => '')));
  return texts.map((t) => t.replace(/\s+/g, ' ').trim());
}

async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SHOTS, name);
  rmSync(path, { force: true });
  await page.screenshot({ path, type: 'png' });
  const png = pngSize(path);
  expect({ width: png.width, height: png.height }).toEqual(VIEWPORT);
  expect(png.bytes).toBeGreaterThan(10_000); // a near-blank page is a few KB; these views are 80–190 KB
  console.log(`screenshot: ${path} (${png.width}×${png.height}, ${png.bytes} bytes)`);
  return path;
}

describe('the Web UI in a real browser', () => {
  it('lists a parked run by AgentStatus; its page shows the summary, what it awaits, and the input decoded by the codec server', { timeout: 600_000 }, async () => {
    // Launched in the test, not a hook: with no browser the test itself fails
    // (saying how to install one), never reported as skipped.
    mkdirSync(SHOTS, { recursive: true });
    const browser = await launchChromium();
    const id = `web-ui-${randomUUID().slice(0, 8)}`;
    const m = marker();
    // Over the codec's threshold, so the input travels gzipped.
    const notes = Array.from({ length: 1400 }, (_, i) => `Note ${i}: keep the newest logs.`).join(' ');
    // The short fields first: the UI draws only the start of the task's long line.
    const input: AgentInput = { model: 'destructive', workspace: freshWorkspace(), task: `Free some space. ${m} ${notes}` };
    expect(input.task.length).toBeGreaterThan(DEFAULT_COMPRESS_ABOVE_BYTES);
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: h.taskQueue, workflowId: id, args: [input], staticSummary: summaryOf(input) });
    try {
      await waitForApproval(handle, 'c2');
      const query = `WorkflowId="${id}" AND AgentStatus="awaiting_approval"`;
      await waitFor('the run listed as awaiting approval', async () => {
        for await (const w of h.client.workflow.list({ query })) return w;
        return null;
      });
      // What Temporal holds, without our codec: ciphertext under the suite's key, unreadable on its own.
      const raw = await h.client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId: id }, maximumPageSize: 1 });
      const stored = raw.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(Buffer.from(stored?.metadata?.encoding ?? new Uint8Array()).toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(stored?.metadata?.[KEY_ID_METADATA] ?? new Uint8Array()).toString()).toBe('suite-key');
      expect(Buffer.from(stored?.data ?? new Uint8Array()).includes(m)).toBe(false);

      const page = await browser.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT_MS);
      page.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
      await page.setViewport(VIEWPORT);
      const decodeOrigins: string[] = [];
      const decodeStatuses: number[] = [];
      // The Web UI sends a bearer token itself only as its signed-in user's
      // OIDC access token to an HTTPS codec endpoint (codec.passAccessToken);
      // the dev server's UI has no sign-in. So the browser adds the codec
      // server's token to the UI's own calls, where an authenticating proxy
      // in front of the codec server would (docs/security.md).
      await page.setRequestInterception(true);
      page.on('request', (r) => {
        if (r.isInterceptResolutionHandled()) return;
        if (r.url().startsWith(`${codecUrl}/decode`) && r.method() === 'POST') {
          decodeOrigins.push(r.headers().origin ?? '');
          void r.continue({ headers: { ...r.headers(), authorization: `Bearer ${codecToken}` } });
        } else void r.continue();
      });
      page.on('response', (r) => {
        if (r.url().startsWith(`${codecUrl}/decode`) && r.request().method() === 'POST') decodeStatuses.push(r.status());
      });
      try {
        // (1) The workflows list, filtered the way ops find runs parked on a person.
        await page.goto(`${webUi}/namespaces/default/workflows?query=${encodeURIComponent(query)}`, { waitUntil: 'domcontentloaded' });
        // The row, not the filter chip (which names the id too): its link to the run.
        const link = `tr a[href*="/workflows/${id}/"]`;
        await page.waitForSelector(link);
        const row = await page.evaluate((sel: string) => document.querySelector(sel)?.closest('tr')?.innerText ?? '', link);
        expect(row).toContain(id);
        expect(row).toMatch(/running/i);
        expect(row).toContain('agentRun');
        await screenshot(page, 'workflows-list.png');

        // (2) The run's page: the input, decoded by the browser through the codec server.
        await page.goto(`${webUi}/namespaces/default/workflows/${id}`, { waitUntil: 'domcontentloaded' });
        const runText = await waitForText(page, `"task": "Free some space. ${m}`);
        expect(runText).toContain(`"model": "destructive"`);
        expect(runText).toContain(`"workspace": "${input.workspace}"`);
        expect(runText).not.toContain(GZIP_ENCODING);
        expect(runText).not.toContain(ENCRYPTED_ENCODING);
        expect(runText).not.toContain('H4sI'); // base64 of gzip's magic bytes
        expect(decodeOrigins).toContain(webUi); // the browser itself called the codec, from the UI's origin
        expect(decodeStatuses.length).toBeGreaterThan(0);
        expect(decodeStatuses.every((s) => s === 200)).toBe(true); // every call carried the token
        await screenshot(page, 'run-input.png');

        // (3) Its User Metadata tab: the summary (the task) and the live details panel.
        await (await page.waitForSelector(`a[role="tab"][href*="/user-metadata"]`))!.click();
        const frames = await waitFor(
          'the summary and the details panel',
          async () => {
            const t = await frameTexts(page);
            return t.some((x) => x.includes('awaiting approval: delete_file {"path":"access.log"} (call c2)')) && t.some((x) => x.startsWith(`Free some space. ${m}`)) ? t : null;
          },
          PAGE_TIMEOUT_MS,
        );
        const details = frames.find((x) => x.includes('awaiting approval'))!;
        expect(details).toContain(`Task: Free some space. ${m}`);
        expect(details).toMatch(/Turns: 2 of 15/);
        expect(details).toContain('Model: destructive');
        expect(details).toMatch(/Cost: \$0\.\d{6} of \$1 /); // dollars, not read as math
        await screenshot(page, 'run-details.png');
      } finally {
        await page.close();
      }
    } finally {
      // Not left parked: other files list runs awaiting approval.
      await handle.terminate('web-ui-browser test done').catch(() => {});
      await browser.close();
    }
  });
});
