// The example live page (examples/live-page/server.ts) in the real headless
// Chromium: a person opens it on a run parked for approval, sees the events
// stream in, presses Approve, and watches the answer arrive as tokens, read
// from the run's live stream through the page's server-sent events.
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import { AgentClient } from '../client/index.js';
import { startLivePage, type LivePage } from '../examples/live-page/server.js';
import { launchChromium } from './helpers/browser.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';

const h = useHarness();
let started: Promise<{ browser: Browser; page: LivePage }> | undefined;

// Started by the first test, not a hook: a browser that cannot start fails
// that test with its reason, where a failing hook reports the tests skipped.
function livePage(): Promise<{ browser: Browser; page: LivePage }> {
  started ??= (async () => ({
    browser: await launchChromium(),
    page: await startLivePage(new AgentClient({ client: h.client, taskQueue: h.taskQueue })),
  }))();
  return started;
}

afterAll(async () => {
  const s = await started?.catch(() => undefined);
  await s?.browser.close();
  await s?.page.close();
});

// Each test's time includes a cold browser start, which took 8 s here unloaded.
describe('the live page', { timeout: 300_000 }, () => {
  it('shows a parked run\'s approval, approves it by its button, and shows the answer as it streams', async () => {
    const workflowId = `live-page-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() }, workflowId);
    await waitForApproval(handle, 'c2');
    const { browser, page } = await livePage();
    const tab = await browser.newPage();
    await tab.goto(`${page.url}/?run=${encodeURIComponent(workflowId)}`);
    await tab.waitForSelector('#decision:not([hidden])', { timeout: 60_000 });
    expect(await tab.$eval('#call', (el) => el.textContent)).toBe('delete_file {"path":"access.log"} (call c2)');
    await tab.click('#approve');
    await tab.waitForFunction('document.getElementById("status")?.textContent === "completed"', { timeout: 60_000 });
    expect(await tab.$eval('#reply', (el) => el.textContent)).toBe('Deleted access.log to free space.');
    // The answer came as it was written: its first delta, then the rest (not one whole reply).
    expect(Number(await tab.$eval('#reply', (el) => el.getAttribute('data-tokens')))).toBeGreaterThanOrEqual(2);
    const events = await tab.$$eval('#events li', (lis) => lis.map((li) => li.textContent ?? ''));
    expect(events[0]).toMatch(/^#0 run_started/);
    expect(events.some((e) => / approval_decided/.test(e))).toBe(true);
    expect(events.at(-1)).toMatch(/ run_stopped$/);
    expect((await handle.result()).output).toBe('Deleted access.log to free space.');
    await tab.close();
  });

  it('rejects by its button with the reason typed, which the model reads', async () => {
    const workflowId = `live-page-reject-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() }, workflowId);
    await waitForApproval(handle, 'c2');
    const { browser, page } = await livePage();
    const tab = await browser.newPage();
    await tab.goto(`${page.url}/?run=${encodeURIComponent(workflowId)}`);
    await tab.waitForSelector('#decision:not([hidden])', { timeout: 60_000 });
    await tab.type('#reason', 'keep the logs for the audit');
    await tab.click('#reject');
    await tab.waitForFunction('document.getElementById("status")?.textContent === "completed"', { timeout: 60_000 });
    expect(await tab.$eval('#reply', (el) => el.textContent)).toBe('I did not delete anything: you declined the deletion.');
    const transcript = await handle.query<{ content?: string | null }[]>('transcript').catch(() => []);
    const result = await handle.result();
    expect(result.output).toBe('I did not delete anything: you declined the deletion.');
    expect(JSON.stringify(transcript)).toContain('keep the logs for the audit');
    await tab.close();
  });
});
