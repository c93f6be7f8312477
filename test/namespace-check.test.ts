// Cloud-ready start-up, with real worker processes against namespaces of the
// shared dev server created without the harness's search attributes. The
// Cloud case — an API key that may not create them — is a worker started
// with AGENT_SEARCH_ATTRIBUTES=check: it stops at start naming what is
// missing and the exact command that creates it; that command, run as
// printed, lets the next start succeed. A worker allowed to create them does.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes.js';
import { createCommands, searchAttributeGaps } from '../worker/search-attribute-check.js';
import { useHarness, waitFor } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';

const h = useHarness({ worker: false });
const workers: WorkerProcess[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
});

const cli = (...args: string[]) => execFileSync(findTemporalCli(), [...args, '--address', h.address], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A namespace with only these of the harness's attributes (the others missing, or typed as `types` says). */
async function namespaceWith(names: string[], types: Record<string, string> = {}): Promise<string> {
  const ns = `ns-${randomUUID().slice(0, 8)}`;
  cli('operator', 'namespace', 'create', '--namespace', ns);
  // The namespace cache lags its creation: retry until the server knows it.
  for (const name of names) {
    await waitFor(`${name} on ${ns}`, () => {
      try {
        cli('operator', 'search-attribute', 'create', '--namespace', ns, '--name', name, '--type', types[name] ?? SEARCH_ATTRIBUTES[name]);
        return true;
      } catch {
        return false;
      }
    });
  }
  return ns;
}

function startWorker(ns: string, env: Record<string, string>): Promise<WorkerProcess> {
  return startWorkerProcess({
    taskQueue: `ns-check-${randomUUID().slice(0, 8)}`,
    traceDir: mkdtempSync(join(tmpdir(), 'ns-trace-')),
    workspaceRoot: mkdtempSync(join(tmpdir(), 'ns-ws-')),
    env: { TEMPORAL_NAMESPACE: ns, ...env },
  }).then((w) => {
    workers.push(w);
    return w;
  });
}

/** The worker's output when it exits before it is ready (startWorkerProcess rejects with it); its refusal is in the manual. */
async function refusal(ns: string, env: Record<string, string>): Promise<string> {
  const err = await startWorker(ns, env).then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  expect(err, 'the worker started, but it should have refused').not.toBeNull();
  const lines = (err ?? '').split('\n');
  const from = lines.findIndex((l) => l.startsWith('worker not started: '));
  expect(from).toBeGreaterThan(-1);
  for (const line of [lines[from], ...lines.slice(from + 1).filter((l) => l.startsWith('  '))]) expect(isDocumented(line), line).toBe(true);
  return err ?? '';
}

describe('a worker checks its namespace’s search attributes at start', () => {
  // Two worker processes and a dozen CLI calls: minutes on a loaded 2-core machine.
  it('lacking one that it may not create, it exits naming it and the command; the command as printed fixes it', { timeout: 300_000 }, async () => {
    const all = Object.keys(SEARCH_ATTRIBUTES);
    const ns = await namespaceWith(all.filter((n) => n !== 'AgentErrorType'));
    const out = await refusal(ns, { AGENT_SEARCH_ATTRIBUTES: 'check' });
    expect(out).toContain(`namespace ${ns} lacks the search attributes AgentErrorType (Keyword)`);
    const [command] = createCommands(ns, ['AgentErrorType']);
    expect(command).toBe(`temporal operator search-attribute create --namespace ${ns} --name AgentErrorType --type Keyword`);
    expect(out).toContain(command);
    // The operator runs it as printed.
    cli(...command.split(' ').slice(1));
    const w = await startWorker(ns, { AGENT_SEARCH_ATTRIBUTES: 'check' });
    expect(w.output()).toContain(`namespace=${ns}`);
  });

  it('one with the wrong type stops it too, naming both types', { timeout: 180_000 }, async () => {
    const ns = await namespaceWith(Object.keys(SEARCH_ATTRIBUTES), { AgentTurns: 'Keyword' });
    const out = await refusal(ns, {});
    expect(out).toContain(`namespace ${ns} has AgentTurns as Keyword, but the runs set AgentTurns as Int`);
  });

  it('allowed to create them (the default), it adds what is missing and starts', { timeout: 180_000 }, async () => {
    const ns = await namespaceWith([]);
    const w = await startWorker(ns, {});
    expect(w.output()).toContain(`namespace=${ns}`);
    const conn = await Connection.connect({ address: h.address });
    try {
      expect(await searchAttributeGaps(conn, ns)).toEqual({ missing: [], wrongType: [] });
    } finally {
      await conn.close();
    }
  });
});
