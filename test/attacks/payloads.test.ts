// The payload surface, as an attacker meets it (issue 33, item 2): hand-made
// payloads sent over raw gRPC, past every client-side check. A payload that
// cannot be decoded (not the gzip it says, a key id this worker lacks, JSON
// that does not parse, a decompression bomb) is refused to its sender — the
// signal traced as ignored, the update refused, the start failed as
// InvalidInput — and never fails a workflow task: the run answers queries and
// ends on a cancel. Bombs stop at the unpack cap on every side.
import { randomBytes, randomUUID } from 'node:crypto';
import { createGzip, gzipSync } from 'node:zlib';
import proto from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { startCodecServer } from '../../client/codec-server.js';
import { dataConverter, GzipPayloadCodec, GZIP_ENCODING, MAX_UNPACKED_BYTES_PER_CALL, MAX_UNPACKED_PAYLOAD_BYTES, payloadCodecs, UndecodablePayloadError } from '../../node/payload-codec.js';
import { withHarnessCodec } from '../../node/codec-plugin.js';
import { statusQuery } from '../../common/run-messages.js';
import { undecodableProblem } from '../../common/undecodable.js';
import { useHarness, freshWorkspace, waitFor, waitForApproval } from '../helpers/harness.js';
import { temporalCli } from '../helpers/temporal-cli.js';

const h = useHarness();
const enc = (s: string) => new TextEncoder().encode(s);

/** gzip of `bytes` zeros, streamed: the bomb is built here, never held unpacked (nor committed). */
async function gzipOfZeros(bytes: number): Promise<Buffer> {
  const gz = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  const chunk = Buffer.alloc(1024 * 1024);
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!gz.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => gz.once('drain', r));
  }
  gz.end();
  await done;
  return Buffer.concat(out);
}

const BOMB_BYTES = 64 * 1024 * 1024;

/** The hostile payloads, each with words its refusal must carry. */
async function hostilePayloads(): Promise<{ name: string; payload: Payload; says: string }[]> {
  return [
    { name: 'not gzip', payload: { metadata: { encoding: enc(GZIP_ENCODING) }, data: enc('this is not gzip') }, says: 'not gzip' },
    {
      name: 'unknown key id',
      payload: { metadata: { encoding: enc('binary/encrypted'), 'encryption-key-id': enc('stolen-key') }, data: randomBytes(64) },
      says: 'stolen-key',
    },
    { name: 'bad JSON', payload: { metadata: { encoding: enc('json/plain') }, data: enc('{"callId": ') }, says: 'not valid JSON' },
    { name: 'unknown encoding', payload: { metadata: { encoding: enc('binary/evil') }, data: enc('{}') }, says: 'payload encoding "binary/evil" is not one a worker reads' },
    // Empty bytes over raw gRPC reach the worker as a plain array, not a Uint8Array: decoding it as text threw outside every refusal (found by the property in ./hostile-runs.test.ts).
    { name: 'empty encoding, no data', payload: { metadata: { encoding: new Uint8Array() }, data: new Uint8Array() }, says: 'payload encoding "" is not one a worker reads' },
    {
      name: 'packed twice',
      payload: { metadata: { encoding: enc(GZIP_ENCODING) }, data: gzipSync(proto.temporal.api.common.v1.Payload.encode({ metadata: { encoding: enc(GZIP_ENCODING) }, data: gzipSync(enc('{}')) }).finish()) },
      says: 'still binary/gzip once decoded',
    },
    { name: 'bomb', payload: { metadata: { encoding: enc(GZIP_ENCODING) }, data: await gzipOfZeros(BOMB_BYTES) }, says: `more than ${MAX_UNPACKED_PAYLOAD_BYTES} bytes` },
  ];
}

describe('undecodable payloads on a run', () => {
  it('signals are traced as ignored, updates refused, queries answered; the run still ends on `temporal workflow cancel`', { timeout: 180_000 }, async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    const svc = h.client.workflowService;
    const execution = { workflowId: handle.workflowId };
    const hostile = await hostilePayloads();
    for (const { payload } of hostile) {
      await svc.signalWorkflowExecution({ namespace: 'default', workflowExecution: execution, signalName: 'approve', input: { payloads: [payload] }, identity: 'attacker' });
    }
    const ignored = await waitFor('every hostile approve traced as ignored', () => {
      const lines = h.events(handle.workflowId).filter((l) => l.type === 'signal_ignored' && l.signal === 'approve');
      return lines.length >= hostile.length ? lines : null;
    });
    for (const [i, { name, says }] of hostile.entries()) {
      expect(String(ignored[i].reason), name).toContain("approve signal's payload could not be decoded");
      expect(String(ignored[i].reason), name).toContain(says);
    }
    // Each update refused, naming why, the run unmoved.
    for (const { name, payload, says } of hostile) {
      const res = await svc.updateWorkflowExecution({
        namespace: 'default',
        workflowExecution: execution,
        request: { meta: { updateId: randomUUID(), identity: 'attacker' }, input: { name: 'decide', args: { payloads: [payload] } } },
        waitPolicy: { lifecycleStage: 3 /* COMPLETED */ },
      });
      const failure = res.outcome?.failure;
      expect(failure?.message, name).toContain("decide update's payload could not be decoded");
      expect(failure?.message, name).toContain(says);
      expect(failure?.applicationFailureInfo?.type, name).toBe('UpdateRefused');
    }
    // A query whose argument cannot be decoded is still answered.
    const answered = await svc.queryWorkflow({ namespace: 'default', execution, query: { queryType: 'status', queryArgs: { payloads: [hostile[0].payload] } } });
    expect(answered.queryResult?.payloads?.length).toBe(1);
    const status = await handle.query(statusQuery);
    expect(status.interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    // The approval never went through: the run is still parked, and Temporal's own cancel ends it.
    const cancelled = await temporalCli(h.address, 'workflow', 'cancel', '--workflow-id', handle.workflowId);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const result = await handle.result();
    expect(result.status).toBe('interrupted');
    expect(result.interruption).toMatchObject({ type: 'cancelled' });
    expect(h.events(handle.workflowId).some((l) => l.type === 'approval_decided')).toBe(false);
  });

  it('a cancel signal that cannot be decoded is ignored on record, and the next good one ends the run', { timeout: 120_000 }, async () => {
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    const [notGzip] = await hostilePayloads();
    await h.client.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId },
      signalName: 'cancel',
      input: { payloads: [notGzip.payload] },
      identity: 'attacker',
    });
    await waitFor('the cancel traced as ignored', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored' && l.signal === 'cancel'));
    // The live stream's publish signal (the stream library's handler) too: the run still answers.
    await h.client.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId },
      signalName: '__temporal_workflow_stream_publish',
      input: { payloads: [notGzip.payload] },
      identity: 'attacker',
    });
    // And one that decodes but is not of the library's shape (its handler threw a TypeError on it).
    await h.client.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId },
      signalName: '__temporal_workflow_stream_publish',
      input: { payloads: [{ metadata: { encoding: enc('json/plain') }, data: enc('{"items": 5}') }] },
      identity: 'attacker',
    });
    const publishes = await waitFor('both publishes traced as ignored', () => {
      const lines = h.events(handle.workflowId).filter((l) => l.type === 'signal_ignored' && l.signal === '__temporal_workflow_stream_publish');
      return lines.length >= 2 ? lines : null;
    });
    expect(publishes.map((l) => String(l.reason))).toEqual([
      expect.stringContaining('could not be decoded: payload says binary/gzip but is not gzip data'),
      '__temporal_workflow_stream_publish: items must be an array',
    ]);
    expect((await handle.query(statusQuery)).interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    const r = await temporalCli(h.address, 'workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'cancel', '--input', '{"reason":"by hand"}');
    expect(r.code, r.stderr).toBe(0);
    expect(await handle.result()).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'by hand' } });
  });

  it('a binary payload (binary/plain: one key per byte for a schema to walk) is refused at once, by size, not walked', { timeout: 120_000 }, async () => {
    // 2 MiB: Temporal's own limit, no codec needed. Walked by the approve
    // schema it took seconds of the workflow thread; at 8 MiB (a gzip within
    // the unpack cap) past the thread's deadline, and Node aborted the worker.
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    const binary: Payload = { metadata: { encoding: enc('binary/plain') }, data: new Uint8Array(2 * 1024 * 1024 - 4096) };
    await h.client.workflowService.signalWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: handle.workflowId }, signalName: 'approve', input: { payloads: [binary] }, identity: 'attacker' });
    const line = await waitFor('the binary approve traced as ignored', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored' && l.signal === 'approve'));
    expect(line.reason).toBe(`the approve signal's payload is ${binary.data?.length} bytes of binary data; it must be a JSON object`);
    const res = await h.client.workflowService.updateWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId },
      request: { meta: { updateId: randomUUID(), identity: 'attacker' }, input: { name: 'steer', args: { payloads: [binary] } } },
      waitPolicy: { lifecycleStage: 3 /* COMPLETED */ },
    });
    expect(res.outcome?.failure?.message).toContain("steer update's payload is");
    expect((await handle.query(statusQuery)).interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    await handle.cancel();
    expect(await handle.result()).toMatchObject({ status: 'interrupted' });
  });

  it('a start whose input cannot be decoded fails at once as InvalidInput, naming why', { timeout: 120_000 }, async () => {
    for (const { name, payload, says } of (await hostilePayloads()).filter((p) => p.name !== 'bomb')) {
      const workflowId = `undecodable-start-${randomUUID().slice(0, 8)}`;
      await h.client.workflowService.startWorkflowExecution({
        namespace: 'default',
        workflowId,
        workflowType: { name: 'agentRun' },
        taskQueue: { name: h.taskQueue },
        input: { payloads: [payload] },
        requestId: randomUUID(),
        identity: 'attacker',
      });
      h.track(workflowId);
      const err = await h.client.workflow
        .getHandle(workflowId)
        .result()
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err, name).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as { type?: string; message?: string } | undefined;
      expect(cause?.type, name).toBe('InvalidInput');
      expect(cause?.message, name).toContain('start input could not be decoded');
      expect(cause?.message, name).toContain(says);
    }
  });
});

describe('decompression bombs', () => {
  it('every side stops unpacking at the cap: the client throws naming it, the worker refuses', async () => {
    const bomb: Payload = { metadata: { encoding: enc(GZIP_ENCODING) }, data: await gzipOfZeros(BOMB_BYTES) };
    const strict = new GzipPayloadCodec();
    const err = await strict.decode([bomb]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UndecodablePayloadError);
    expect((err as Error).message).toBe(`binary/gzip payload unpacks to more than ${MAX_UNPACKED_PAYLOAD_BYTES} bytes, the cap (docs/security.md)`);
    // The worker's codec: a workflow's payload becomes the marker, an activity's still throws.
    const [gzip] = payloadCodecs({ payloadKeys: null, undecodable: 'refuse' });
    const [marker] = await gzip.decode([bomb], { type: 'workflow', namespace: 'default', workflowId: 'w' });
    expect(undecodableProblem(JSON.parse(new TextDecoder().decode(marker.data ?? undefined)))).toContain('the cap');
    await expect(gzip.decode([bomb], { type: 'activity', namespace: 'default', isLocal: false })).rejects.toThrow(UndecodablePayloadError);
  });

  it("a worker given the client's converter (agentDataConverter()) still refuses rather than throws", async () => {
    const notGzip: Payload = { metadata: { encoding: enc(GZIP_ENCODING) }, data: enc('not gzip') };
    const worker = withHarnessCodec(dataConverter({ payloadKeys: null }), { undecodable: 'refuse' });
    const decoded = await (worker.payloadCodecs ?? []).reduceRight(async (acc, c) => c.decode(await acc, { type: 'workflow', namespace: 'default', workflowId: 'w' }), Promise.resolve([notGzip]));
    expect(undecodableProblem(JSON.parse(new TextDecoder().decode(decoded[0].data ?? undefined)))).toContain('not gzip');
  });

  it('many bombs in one call stop at the per-call total', async () => {
    // Each a well-formed payload under the per-payload cap, five of them past the call's total.
    const inner = proto.temporal.api.common.v1.Payload.encode({ metadata: { encoding: enc('binary/plain') }, data: Buffer.alloc(MAX_UNPACKED_PAYLOAD_BYTES - 1024) }).finish();
    const one = gzipSync(inner);
    const payloads = Array.from({ length: 5 }, () => ({ metadata: { encoding: enc(GZIP_ENCODING) }, data: one }));
    const codec = new GzipPayloadCodec();
    expect(await codec.decode(payloads.slice(0, 3))).toHaveLength(3);
    await expect(codec.decode(payloads)).rejects.toThrow(`binary/gzip payloads of one message unpack to more than ${MAX_UNPACKED_BYTES_PER_CALL} bytes in all, the cap (docs/security.md)`);
  });
});

describe('the codec server', () => {
  const post = async (url: string, body: string) => {
    const res = await fetch(`${url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, text: await res.text() };
  };

  it('refuses a bomb with 400 naming the cap (its body cap alone did not cap what it unpacked)', async () => {
    const { url, server } = await startCodecServer(0, '127.0.0.1', { payloadKeys: null });
    try {
      const data = (await gzipOfZeros(BOMB_BYTES)).toString('base64');
      const res = await post(url, JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from(GZIP_ENCODING).toString('base64') }, data }] }));
      expect(res.status).toBe(400);
      expect(res.text.length).toBeLessThan(1000);
      expect(JSON.parse(res.text)).toEqual({ error: `binary/gzip payload unpacks to more than ${MAX_UNPACKED_PAYLOAD_BYTES} bytes, the cap (docs/security.md)` });
    } finally {
      server.close();
    }
  });

  it("answers a malformed request with a short message naming what is wrong, never JavaScript's internals", async () => {
    const { url, server } = await startCodecServer(0, '127.0.0.1', { payloadKeys: null });
    try {
      const cases: [string, string][] = [
        ['{"payloads": [', 'request body is not JSON'],
        ['{"payloads": 5}', 'request body must be an object with a "payloads" array'],
        ['[1]', 'request body must be an object with a "payloads" array'],
        ['{"payloads": [7]}', 'payloads[0] must be an object'],
        ['{"payloads": [{"metadata": {"encoding": 5}}]}', 'payloads[0].metadata.encoding must be a base64 string'],
        ['{"payloads": [{"metadata": "x", "data": "eA=="}]}', 'payloads[0].metadata must be an object'],
        ['{"payloads": [{}, {"data": {"a": 1}}]}', 'payloads[1].data must be a base64 string'],
        [JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from(GZIP_ENCODING).toString('base64') }, data: 'bm90IGd6aXA=' }] }), 'payload says binary/gzip but is not gzip data'],
      ];
      for (const [body, says] of cases) {
        const res = await post(url, body);
        expect(res.status, body).toBe(400);
        const { error } = JSON.parse(res.text) as { error: string };
        expect(error, body).toContain(says);
        expect(error, body).not.toMatch(/TypeError|SyntaxError|Cannot read|is not a function|at position|\bat \w+ \(/);
      }
    } finally {
      server.close();
    }
  });
});
