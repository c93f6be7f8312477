// The prompt by address: a model call's input in history holds the messages
// the store already has as references and only the new ones whole; the store
// is a cache the run never depends on.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApplicationFailure } from '@temporalio/common';
import { MessageStore, resolvePrompt } from '../activities/message-store.js';
import { addressOf, isRef, MESSAGE_STORE_MISS, noteFiled, promptByAddress, rememberPrompt, wholePrompt, type StoreKnowledge } from '../common/message-refs.js';
import { toolDefinitions } from '../common/tool-spec.js';
import { specs } from './helpers/builtin-specs.js';
import type { ChatMessage } from '../common/contract.js';
import { approveSignal, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, marker, useHarness, waitForApproval } from './helpers/harness.js';
import { modelCallInputs } from '../client/run-history.js';
import type { agentRun } from '../workflows/index.js';
import { propertyParams } from './helpers/property.js';


describe('addresses', () => {
  it('the workflow (pure JS) and the store (node:crypto) give every JSON text the same address', () => {
    const node = (s: string) => createHash('sha256').update(s).digest('base64url');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.jsonValue().map((v) => JSON.stringify(v)), fc.string({ unit: 'grapheme' })), (s) => {
        expect(addressOf(s)).toBe(node(s));
      }),
      propertyParams(),
    );
    // Lengths on every side of a 64-byte block and of base64's 3-byte groups.
    for (let n = 0; n < 130; n++) expect(addressOf('é'.repeat(n))).toBe(node('é'.repeat(n)));
  });
});

describe('the prompt by address, whatever the store loses', () => {
  it('the model is sent exactly the transcript: by address, or after a miss whole; and a store that lost nothing never misses', async () => {
    const tools = toolDefinitions(specs('list_files', 'read_file'));
    const text = fc.string({ maxLength: 40 });
    const step = fc.record({
      add: fc.array(text, { minLength: 1, maxLength: 3 }),
      fileTool: fc.boolean(),
      elide: fc.option(fc.nat()),
      loss: fc.constantFrom('none', 'none', 'wipe', 'other host', 'one file'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), fc.nat(), async (steps, seed) => {
        const dir = mkdtempSync(join(tmpdir(), 'store-prop-'));
        let store = new MessageStore(dir);
        const messages: ChatMessage[] = [{ role: 'user', content: 'the task' }];
        const known: StoreKnowledge = {};
        for (const [i, st] of steps.entries()) {
          for (const [j, t] of st.add.entries()) messages.push({ role: 'tool', tool_call_id: `c${i}-${j}`, name: 'read_file', content: t });
          if (st.fileTool) {
            // A tool activity filed its result: the workflow trusts the address it checks.
            const last = messages[messages.length - 1];
            const { ref, written } = store.file(JSON.stringify(last));
            await written;
            noteFiled(known, last, ref);
          }
          if (st.elide !== null) {
            const k = 1 + (st.elide % (messages.length - 1));
            messages[k] = { ...messages[k], content: `[elided ${k}]` };
          }
          if (st.loss === 'wipe') rmSync(dir, { recursive: true, force: true });
          if (st.loss === 'one file') {
            const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
            if (files.length) rmSync(join(files[seed % files.length].parentPath, files[seed % files.length].name));
          }
          // A lost folder or another host: a process that never saw the texts.
          if (st.loss !== 'none') store = new MessageStore(st.loss === 'other host' ? mkdtempSync(join(tmpdir(), 'store-host-')) : dir);
          const sent = messages.slice();
          let got;
          let prompt = promptByAddress(sent, tools, known);
          try {
            got = await resolvePrompt(store, prompt);
          } catch (err) {
            expect((err as ApplicationFailure).type).toBe(MESSAGE_STORE_MISS);
            expect(st.loss).not.toBe('none');
            prompt = wholePrompt(sent, tools);
            got = await resolvePrompt(store, prompt);
          }
          await got.filed;
          expect(got.messages).toEqual(sent);
          expect(got.tools).toEqual(tools);
          const reply: ChatMessage = { role: 'assistant', content: `reply ${i}` };
          await store.file(JSON.stringify(reply)).written;
          rememberPrompt(known, sent, tools, reply, prompt);
          messages.push(reply);
        }
      }),
      propertyParams(150),
    );
  });
});

/** Bytes of every file under `dir`. */
function folderBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile())
    .reduce((n, f) => n + statSync(join(f.parentPath, f.name)).size, 0);
}

describe('what the store keeps on disk', () => {
  // A run's turn: a reply with one call and the call's result, both new.
  const MEASURED = new Set([9, 109, 299, 399]);
  async function turns(n: number, store: MessageStore): Promise<number[]> {
    const tools = toolDefinitions(specs('list_files'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'the task' }];
    const known: StoreKnowledge = {};
    const bytes: number[] = [];
    for (let t = 0; t < n; t++) {
      const sent = messages.slice();
      const prompt = promptByAddress(sent, tools, known);
      const got = await resolvePrompt(store, prompt);
      await got.filed;
      const reply: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'list_files', arguments: '{}' } }] };
      await store.file(JSON.stringify(reply)).written;
      rememberPrompt(known, sent, tools, reply, prompt);
      messages.push(reply, { role: 'tool', tool_call_id: `c${t}`, name: 'list_files', content: `a.txt ${t}` });
      bytes.push(MEASURED.has(t) ? folderBytes(store.dir) : NaN);
    }
    return bytes;
  }
  const perTurn = (bytes: number[], from: number, to: number) => (bytes[to - 1] - bytes[from - 1]) / (to - from);

  it('a run files what is new each turn: bytes per turn stay flat as the run grows', async () => {
    const bytes = await turns(400, new MessageStore(mkdtempSync(join(tmpdir(), 'store-disk-'))));
    expect(perTurn(bytes, 300, 400)).toBeLessThan(1.2 * perTurn(bytes, 10, 110));
  });

  it('a worker that never saw the run reads its chain from the files alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-cold-'));
    const tools = toolDefinitions(specs('list_files'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'the task' }];
    const known: StoreKnowledge = {};
    for (let t = 0; t < 30; t++) {
      // A fresh process every turn: nothing in memory, every node read from disk.
      const store = new MessageStore(dir);
      const sent = messages.slice();
      const prompt = promptByAddress(sent, tools, known);
      if (t > 0) expect(prompt.prefix?.count).toBe(sent.length - 1);
      const got = await resolvePrompt(store, prompt);
      await got.filed;
      expect(got.messages).toEqual(sent);
      const reply: ChatMessage = { role: 'assistant', content: `reply ${t}` };
      await store.file(JSON.stringify(reply)).written;
      rememberPrompt(known, sent, tools, reply, prompt);
      messages.push(reply);
    }
  });
});

const h = useHarness();

describe('model calls by address', () => {
  it('each call sends only what is new whole; the model and the transcript query still see every message', async () => {
    // Dedupe off: every turn runs the tool (a cached answer is a new message, sent whole).
    const handle = await h.start({ task: `Keep listing files. ${marker()}`, model: 'runaway', dedupe: 'off', limits: { maxTurns: 12, maxBudgetUsd: null } });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 12 });
    const inputs = await modelCallInputs(h.client, handle);
    expect(inputs).toHaveLength(12);
    // The first call has nothing stored yet: all whole, tool list included.
    expect(inputs[0].messages.every((m) => !isRef(m))).toBe(true);
    expect(inputs[0].tools?.length).toBeGreaterThan(0);
    const count = (input: (typeof inputs)[number]) => (input.prefix?.count ?? 0) + input.messages.length;
    for (const [k, input] of inputs.entries()) {
      if (k === 0) continue;
      // Turn k's prompt: the last prompt as one address, then its reply and
      // the tool result (filed by the tool activity) by address. Nothing whole.
      expect(input.prefix?.count).toBe(count(inputs[k - 1]));
      expect(input.messages).toHaveLength(2);
      expect(input.messages.every(isRef)).toBe(true);
      expect(input.tools).toBeUndefined();
      expect(input.toolsRef).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    // Every call's input is the same size, however long the transcript.
    const sizes = inputs.slice(1).map((input) => JSON.stringify(input).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThan(16);
    // Nothing is only in the store: the run's state answers with every message whole.
    const transcript = await handle.query(transcriptQuery);
    expect(transcript.length).toBeGreaterThan(count(inputs[11]));
    expect(transcript.every((m) => typeof m.role === 'string')).toBe(true);
  });

  it('a worker whose store lacks the messages (another host, a wiped folder) sends them whole once, and the run ends exactly as it would have', async () => {
    // Digits only: both tasks cost the same tokens, so their costs compare exactly.
    const task = () => `Clean up the workspace. [run-${String(Math.floor(1e7 + Math.random() * 9e7))}]`;
    const first = await h.start({ task: task(), model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(first, 'c2');
    await first.signal(approveSignal, { callId: 'c2', by: 'test' });
    const baseline = await first.result();
    // Parked on one worker, approved and finished on another with an empty store of its own.
    const queue = `refs-${randomUUID().slice(0, 8)}`;
    const a = await h.startWorker({ taskQueue: queue });
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `refs-${queue}`, args: [{ task: task(), model: 'destructive', workspace: freshWorkspace() }] });
    await waitForApproval(handle, 'c2');
    await a.shutdown();
    const b = await h.startWorker({ taskQueue: queue, messageStoreDir: mkdtempSync(join(tmpdir(), 'other-host-store-')) });
    await handle.signal(approveSignal, { callId: 'c2', by: 'test' });
    const r = await handle.result();
    await b.shutdown();
    expect({ status: r.status, output: r.output, turns: r.turns, toolRuns: r.toolRuns, cost: r.costUsd }).toEqual({
      status: baseline.status,
      output: baseline.output,
      turns: baseline.turns,
      toolRuns: baseline.toolRuns,
      cost: baseline.costUsd,
    });
    // The miss is on record, and the call after it carried every message whole.
    const misses = h.trace(handle.workflowId).filter((l) => l.type === 'model_error' && l.errorType === 'MessageStoreMiss');
    expect(misses).toHaveLength(1);
    const inputs = await modelCallInputs(h.client, handle);
    // The missed call and its resend carry the same prompt.
    const count = (input: (typeof inputs)[number]) => (input.prefix?.count ?? 0) + input.messages.length;
    const missed = inputs.findIndex((input, i) => i + 1 < inputs.length && count(input) === count(inputs[i + 1]));
    expect(missed).toBeGreaterThan(0);
    expect(inputs[missed].prefix).toBeDefined();
    expect(inputs[missed + 1].prefix).toBeUndefined();
    expect(inputs[missed + 1].messages.some(isRef)).toBe(false);
    expect(inputs[missed + 1].tools?.length).toBeGreaterThan(0);
    expect(inputs).toHaveLength(r.turns + 1);
  });
});
