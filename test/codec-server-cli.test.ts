// Encryption as a package user meets it: keys as values through the client
// entry (agentDataConverter({ payloadKeys })), and the codec server as the
// bin's `agent-harness codec-server`, which lets Temporal's own CLI answer a
// `decide` update on an encrypted run with exit 0 (without it the CLI applies
// the decision, cannot decode the answer, and exits 1).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDataConverter, parsePayloadKeys, type PayloadKey } from '../client/index.js';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';

const spec = `team-2026:${randomBytes(32).toString('base64')}`;
const keys: PayloadKey[] = parsePayloadKeys(spec);
const h = useHarness({ payloadKeys: keys });
const exec = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');

let codec: ChildProcess;
let codecUrl: string;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'codec-keys-'));
  const keysFile = join(dir, 'payload-keys');
  writeFileSync(keysFile, `# the team's keys\n${spec}\n`, { mode: 0o600 });
  // The bin as a package user runs it: the keys from a file, not the environment (AGENT_PAYLOAD_KEYS unset).
  const env = { ...process.env };
  delete env.AGENT_PAYLOAD_KEYS;
  delete env.AGENT_CODEC_TOKEN;
  codec = spawn(process.execPath, [BIN, 'codec-server', '--port', '0', '--keys-file', keysFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  codecUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    codec.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /codec server on (http:\/\/\S+):/.exec(out);
      if (m) resolve(m[1]);
    });
    codec.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    codec.once('exit', (code) => reject(new Error(`agent-harness codec-server exited ${code}: ${out}${err}`)));
  });
});
afterAll(async () => {
  if (!codec || codec.exitCode !== null) return;
  const exited = new Promise((r) => codec.once('exit', r));
  codec.kill('SIGTERM');
  await exited;
});

const decideArgs = (id: string) => ['workflow', 'update', 'execute', '-w', id, '--name', 'decide', '--input', JSON.stringify({ callId: 'c2', decision: 'approve', by: 'alice' }), '--address', h.address];

/** The temporal CLI's exit code, stdout and stderr (a failure is an answer here, not a throw). */
async function temporal(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(findTemporalCli(), args, { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('agent-harness codec-server and the temporal CLI on an encrypted run', () => {
  it('without --codec-endpoint the CLI applies the decision and exits 1; with the bin\'s codec server it exits 0 and prints the decoded status', async () => {
    const blind = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(blind, 'c2');
    const without = await temporal(decideArgs(blind.workflowId));
    // What the README used to show: exit 1 although the run took the decision.
    expect(without.code).toBe(1);
    expect((await blind.result()).status).toBe('completed');

    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    const decoded = await temporal([...decideArgs(handle.workflowId), '--codec-endpoint', codecUrl]);
    expect(decoded, decoded.stderr).toMatchObject({ code: 0 });
    // The update's answer (the run's status after the decision), decrypted by the codec server.
    expect(decoded.stdout).toMatch(/Result\s+map\[agentStatus:running /);
    expect(decoded.stdout).toContain(`runId:${handle.workflowId}`);
    const r = await handle.result();
    expect(r.status).toBe('completed');
    expect(r.toolRuns).toBe(2);
  });

  it('agentDataConverter({ payloadKeys }) from the client entry reads an encrypted run; without the keys the read fails naming the key id', async () => {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() });
    await handle.result();
    const withKeys = new Client({ connection: h.client.connection, dataConverter: agentDataConverter({ payloadKeys: keys }) });
    expect((await withKeys.workflow.getHandle(handle.workflowId).result()) as { status: string }).toMatchObject({ status: 'completed' });
    const noKeys = new Client({ connection: h.client.connection, dataConverter: agentDataConverter({ payloadKeys: null }) });
    const err = await noKeys.workflow
      .getHandle(handle.workflowId)
      .result()
      .then(
        () => null,
        (e: unknown) => e as Error,
      );
    expect(String(err?.message ?? err) + String((err as { cause?: unknown } | null)?.cause ?? '')).toContain('team-2026');
  });

  it('the client entry with keys stays light: importing it loads neither the worker nor its native bridge (AgentPlugin.forClient() did)', async () => {
    const probe = [
      "import { createRequire } from 'node:module';",
      "const entry = await import(process.argv[1]);",
      "entry.agentDataConverter({ payloadKeys: entry.parsePayloadKeys(process.argv[2]) });",
      'const cache = Object.keys(createRequire(import.meta.url).cache);',
      "console.log(JSON.stringify({ worker: cache.some((k) => k.includes('/@temporalio/worker/')), bridge: cache.some((k) => k.includes('/@temporalio/core-bridge/')) }));",
    ].join('\n');
    const entry = join(import.meta.dirname, '..', 'client', 'index.ts');
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe, entry, spec], { timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ worker: false, bridge: false });
  });

  it('agentDataConverter refuses a key that is not 32 bytes, naming the entry and never the key', () => {
    const short = randomBytes(16);
    expect(() => agentDataConverter({ payloadKeys: [{ id: 'k1', key: short }] })).toThrow('payload keys entry 1 (key id k1): the key is 16 bytes, AES-256 needs 32');
  });
});
