// deploy/compose/create-namespace.sh, the compose stack's namespace job, on
// the real server: on a fresh cluster it leaves the namespace with its
// retention and every search attribute the harness defines (before any worker
// could add them), and when it cannot, it fails loudly instead of saying "ready".
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes.js';
import { waitFor } from '../helpers/harness.js';

const SCRIPT = join(PROJECT_ROOT, 'deploy', 'compose', 'create-namespace.sh');
const exec = promisify(execFile);

/** The job as compose runs it (sh, the CLI on PATH), with `env`; its exit code and output. */
async function job(env: Record<string, string>): Promise<{ code: number; out: string }> {
  const cli = findTemporalCli();
  const path = [cli === 'temporal' ? null : dirname(cli), process.env.PATH].filter(Boolean).join(delimiter);
  // The project's CLI may not be called `temporal` (TEMPORAL_CLI): the script calls it by that name.
  const env2 = { ...process.env, PATH: path, ...env };
  return exec('sh', [SCRIPT], { env: env2, timeout: 120_000 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('create-namespace.sh on a fresh cluster', () => {
  it('left the namespace with a 7-day retention and every search attribute, with its type', () => {
    const ns = inject('namespaceAtSetup');
    expect(ns.retentionSeconds).toBe(7 * 24 * 3600);
    const want = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTES).map(([k, v]) => [k, v.toUpperCase()]));
    expect(ns.searchAttributes).toEqual(want);
  });

  it('creates exactly the attributes workflows/search-attributes.ts defines', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    const list = /attributes="([^"]*)"/.exec(text)?.[1] ?? '';
    const pairs = Object.fromEntries(list.split(/\s+/).filter(Boolean).map((p) => p.split('=') as [string, string]));
    expect(pairs).toEqual(SEARCH_ATTRIBUTES);
  });

  it('a namespace holding an attribute of another type: exit 1 naming it, never "ready"', async () => {
    const address = inject('temporalAddress');
    const namespace = `conflict-${randomUUID().slice(0, 8)}`;
    const temporal = (...args: string[]) => exec(findTemporalCli(), [...args, '--address', address], { timeout: 30_000 });
    await temporal('operator', 'namespace', 'create', '-n', namespace);
    // The namespace cache lags its creation: retry the add until the server knows the namespace.
    await waitFor(`AgentStatus as Int on ${namespace}`, () =>
      temporal('operator', 'search-attribute', 'create', '-n', namespace, '--name', 'AgentStatus', '--type', 'Int').then(() => true, () => false));
    const r = await job({ TEMPORAL_ADDRESS: address, DEFAULT_NAMESPACE: namespace });
    expect(r.code).toBe(1);
    expect(r.out).toContain(`search attribute AgentStatus exists on ${namespace} as Int; the harness needs Keyword`);
    expect(r.out).not.toContain('ready');
  });

  it('no server at the address: exit 1 saying so, never "ready"', async () => {
    const r = await job({ TEMPORAL_ADDRESS: '127.0.0.1:1', SETUP_ATTEMPTS: '2' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('server at 127.0.0.1:1 not healthy');
    expect(r.out).not.toContain('ready');
  });

  it('run again on a ready namespace: exit 0, nothing changed', async () => {
    const r = await job({ TEMPORAL_ADDRESS: inject('temporalAddress'), DEFAULT_NAMESPACE: 'default' });
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toContain('namespace default ready');
    expect(r.out).not.toContain('created');
  });
});
