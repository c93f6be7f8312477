// Connecting through the temporal CLI's config file (@temporalio/envconfig):
// a profile naming the suite's dev server and a namespace of its own, chosen
// with TEMPORAL_PROFILE, is what a worker process and the CLI connect with —
// no TEMPORAL_ADDRESS anywhere — and a profile whose TLS files are missing
// stops both with a line naming the file and the profile.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { msToTs } from '@temporalio/common/lib/time';
import { loadConfig } from '../node/config.js';
import { USAGE_ERROR } from '../client/exit-codes.js';
import type { RunStatusView } from '../common/contract.js';
import { useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';

const h = useHarness({ worker: false });
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');

const namespace = `profile-${randomUUID().slice(0, 8)}`;
const dir = mkdtempSync(join(tmpdir(), 'agent-profiles-'));
const configFile = join(dir, 'temporal.toml');
const missingCert = join(dir, 'certs', 'client.pem');

beforeAll(() => {
  writeFileSync(
    configFile,
    [
      '[profile.suite]',
      `address = "${h.address}"`,
      `namespace = "${namespace}"`,
      '',
      '[profile.broken]',
      `address = "${h.address}"`,
      'namespace = "default"',
      '[profile.broken.tls]',
      `client_cert_path = "${missingCert}"`,
      `client_key_path = "${join(dir, 'certs', 'client.key')}"`,
      '',
    ].join('\n'),
  );
});

/** The environment of a process that knows Temporal only by the profile. */
function profileEnv(profile: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEMPORAL_')) env[k] = v;
  return { ...env, TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: profile, TRACE_DIR: h.traceDir, ...extra };
}

describe('connection profiles', () => {
  it('reads address and namespace from the profile; TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE still override it', () => {
    const base = { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'suite' };
    expect(loadConfig(base)).toMatchObject({ temporalAddress: h.address, namespace });
    expect(loadConfig({ ...base, TEMPORAL_ADDRESS: 'elsewhere:7233', TEMPORAL_NAMESPACE: 'ns2' })).toMatchObject({ temporalAddress: 'elsewhere:7233', namespace: 'ns2' });
    // Nothing configured: the embedded dev server, as before.
    expect(loadConfig({})).toMatchObject({ temporalAddress: null, namespace: 'default' });
    expect(loadConfig({ TEMPORAL_ADDRESS: 'h:1' })).toMatchObject({ temporalAddress: 'h:1', temporalConnection: { source: 'TEMPORAL_ADDRESS' } });
    // An API key means TLS, as the temporal CLI has it.
    expect(loadConfig({ TEMPORAL_ADDRESS: 'h:1', TEMPORAL_API_KEY: 'k' }).temporalConnection).toMatchObject({ apiKey: 'k', tls: true });
    // What is named but missing is an error naming it, never a quiet fall back to the dev server.
    expect(() => loadConfig({ ...base, TEMPORAL_PROFILE: 'nope' })).toThrow(/profile "nope" of .*temporal\.toml.*Profile 'nope' not found/);
    expect(() => loadConfig({ TEMPORAL_CONFIG_FILE: join(dir, 'absent.toml') })).toThrow(/TEMPORAL_CONFIG_FILE names .*absent\.toml, which does not exist/);
  });

  it('a worker process and the CLI run and read a run through the profile alone', { timeout: 120_000 }, async () => {
    await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    // A new namespace reaches the frontend's cache after a moment.
    await waitFor('the new namespace', () =>
      h.client.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 }).then(() => true, () => false),
    );
    const taskQueue = `profile-${randomUUID().slice(0, 8)}`;
    // TEMPORAL_ADDRESS emptied: the worker knows the server only by the profile.
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { ...profileEnv('suite'), TEMPORAL_ADDRESS: '' } });
    try {
      expect(worker.output()).toContain(`worker on ${h.address} (profile "suite" of ${configFile}) namespace=${namespace}`);
      const id = `profile-${randomUUID().slice(0, 8)}`;
      const env = profileEnv('suite', { AGENT_TASK_QUEUE: taskQueue });
      const run = await exec(bin, ['run', '--model', 'plan', '--id', id], { env, timeout: 60_000 });
      expect(run.stdout).toContain('answer: errors.log mentions a timeout');
      const status = JSON.parse((await exec(bin, ['status', id], { env, timeout: 30_000 })).stdout) as RunStatusView;
      expect(status).toMatchObject({ runId: id, status: 'completed', turns: 3 });
      // The run lives in the profile's namespace, not in default.
      const described = await h.client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: id } });
      expect(described.workflowExecutionInfo?.type?.name).toBe('agentRun');
      await expect(h.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: id } })).rejects.toThrow();
    } finally {
      await worker.kill();
    }
  });

  it('a profile whose TLS files do not exist stops the CLI and the worker with the file and the profile named', { timeout: 60_000 }, async () => {
    const res = await exec(bin, ['status', 'whatever'], { env: profileEnv('broken'), timeout: 30_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(res.code).toBe(USAGE_ERROR);
    expect(res.stderr.trim()).toBe(`agent-harness: Temporal connection (profile "broken" of ${configFile}): the TLS file ${missingCert} does not exist`);

    const worker = startWorkerProcess({ taskQueue: 'never', traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { ...profileEnv('broken'), TEMPORAL_ADDRESS: '' } });
    await expect(worker).rejects.toThrow(`worker not started: Temporal connection (profile "broken" of ${configFile}): the TLS file ${missingCert} does not exist`);
  });
});
