// `agent-harness trace` finds what the worker wrote by default (issue 34, 5b):
// AgentPlugin writes `<workspace>/.traces`, not the package's own
// `.data/traces` (in a team's project, node_modules/temporal-agent-harness/…).
// TRACE_DIR wins; without it the CLI looks in AGENT_WORKSPACE's `.traces`,
// the packaged worker's `.data/traces`, then `./.traces`. Real files, the
// CLI's main(); no server needed for a run with one trace file on disk.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../client/cli.js';
import { traceDirCandidates, traceDirOf } from '../../client/trace-dirs.js';
import { PROJECT_ROOT } from '../../node/project-root.js';

const saved = { TRACE_DIR: process.env.TRACE_DIR, AGENT_WORKSPACE: process.env.AGENT_WORKSPACE };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  vi.restoreAllMocks();
});

/** A trace as a worker writes it: `<dir>/<workflowId>.<chain>.jsonl`. */
function writeTrace(dir: string, workflowId: string): void {
  mkdirSync(dir, { recursive: true });
  const line = { ts: '2026-01-01T00:00:00.000Z', runId: workflowId, workflowId, seq: 1, type: 'run_started', model: 'plan' };
  writeFileSync(join(dir, `${workflowId}.chain1.jsonl`), `${JSON.stringify(line)}\n`);
}

async function trace(workflowId: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((s: unknown) => void out.push(String(s)));
  vi.spyOn(console, 'error').mockImplementation((s: unknown) => void err.push(String(s)));
  const code = await main(['trace', workflowId]);
  vi.restoreAllMocks();
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('trace finds what the worker wrote by default', () => {
  it('AgentPlugin\'s <workspace>/.traces, the workspace from AGENT_WORKSPACE, with TRACE_DIR unset', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'plugin-ws-'));
    writeTrace(join(ws, '.traces'), 'team-run-1');
    delete process.env.TRACE_DIR;
    process.env.AGENT_WORKSPACE = ws;
    const r = await trace('team-run-1');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ runId: 'team-run-1', type: 'run_started' });
  });

  it('TRACE_DIR wins, and is the only place looked at', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'plugin-ws-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'trace-dir-'));
    writeTrace(join(ws, '.traces'), 'team-run-2');
    process.env.AGENT_WORKSPACE = ws;
    process.env.TRACE_DIR = elsewhere;
    expect(traceDirOf('team-run-2')).toBe(resolve(elsewhere));
    const r = await trace('team-run-2');
    expect(r.code).toBe(6);
    expect(r.err).toBe(`no trace for team-run-2 under ${resolve(elsewhere)} (TRACE_DIR)`);
  });

  it('the lookup order, and a miss names every place looked at', async () => {
    delete process.env.TRACE_DIR;
    const ws = mkdtempSync(join(tmpdir(), 'plugin-ws-'));
    const cwd = mkdtempSync(join(tmpdir(), 'cwd-'));
    const env = { AGENT_WORKSPACE: ws };
    expect(traceDirCandidates(env, cwd).dirs).toEqual([join(ws, '.traces'), resolve(PROJECT_ROOT, '.data', 'traces'), join(cwd, '.traces')]);
    writeTrace(join(cwd, '.traces'), 'cwd-run');
    expect(traceDirOf('cwd-run', env, cwd)).toBe(join(cwd, '.traces'));
    process.env.AGENT_WORKSPACE = ws;
    const r = await trace('no-such-run-anywhere');
    expect(r.code).toBe(6);
    expect(r.err).toMatch(new RegExp(`^no trace for no-such-run-anywhere under ${join(ws, '.traces').replace(/[.]/g, '\\.')}, .* \\(set TRACE_DIR to the worker's traceDir\\)$`));
  });
});
