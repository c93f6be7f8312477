// The done-when of the package: a project outside this repository
// (examples/consumer, its own package.json) installs the freshly packed
// tarball and, under plain node against the suite's dev server and scripted
// provider, runs its own workflow with the agent as a child, tools that
// close over its own store, an approval, a rejection, a steer and a Stop,
// all through AgentClient. The project prints one JSON report; this file
// reads it, then replays every agent run it made on this code.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import type { ChatMessage, RunResult } from '../common/contract.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { useHarness } from './helpers/harness.js';
import { buildAndPack, cleanEnv, installedCopies, mustRun, run } from './helpers/package-consumer.js';

const h = useHarness({ worker: false });

interface Ticket {
  id: string;
  status: 'open' | 'closed';
  note?: string;
}
interface Report {
  toolNames: string[];
  child: { decision: { agentStatus: string }; result: { ticketId: string; agent: RunResult }; ticket: Ticket };
  rejection: { result: RunResult; ticket: Ticket; toolMessage?: ChatMessage };
  steer: { result: RunResult; transcript: ChatMessage[]; ticket: Ticket };
  stop: { result: RunResult; ticket: Ticket };
  parentCancelled: { parent: string; parentStatus: string; child: RunResult; ticket: Ticket };
  workflowIds: string[];
}

let report: Report;
/** Where `@temporalio/workflow` is installed in the team's project: one copy, the team's own. */
let sdkCopies: string[];

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'consumer-'));
  const { tarball } = buildAndPack(join(dir, 'pack'));
  const project = join(dir, 'project');
  cpSync(join(PROJECT_ROOT, 'examples/consumer'), project, { recursive: true, filter: (p) => !/node_modules|dist/.test(p.slice(PROJECT_ROOT.length)) });
  // The dependency on the package is the tarball just made.
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  delete manifest.dependencies['temporal-agent-harness'];
  writeFileSync(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
  mustRun('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], project);
  // Its own TypeScript compiles it against the package's declarations; node runs the JavaScript.
  mustRun(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);
  const r = run(process.execPath, ['dist/main.js'], project, cleanEnv({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    LLM_BASE_URL: inject('providerUrl'),
    AGENT_WORKSPACE: join(dir, 'workspace'),
  }));
  if (r.status !== 0) throw new Error(`the consumer exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  report = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as Report;
  sdkCopies = installedCopies(project, '@temporalio/workflow');
  for (const id of report.workflowIds) h.track(id);
}, 600_000);

describe('a team project that installs the packed package', () => {
  it('holds one copy of the Temporal SDK, its own (the package takes @temporalio/* as peers)', () => {
    expect(sdkCopies).toHaveLength(1);
  });

  it('runs its own workflow with the agent as a child, its write approved through AgentClient, on its own store', () => {
    expect(report.toolNames).toEqual(['lookup_ticket', 'close_ticket']);
    expect(report.child.result).toMatchObject({ ticketId: 'T-1', agent: { status: 'completed', turns: 3, toolRuns: 2 } });
    expect(report.child.ticket).toMatchObject({ status: 'closed', note: 'resolved by the agent' });
  });

  it('a rejection leaves the store as it was, and the model reads the reason', () => {
    expect(report.rejection.result.status).toBe('completed');
    expect(report.rejection.ticket.status).toBe('open');
    expect(String(report.rejection.toolMessage?.content)).toContain('the customer is still testing');
  });

  it('a steer reaches the next turn\'s prompt', () => {
    expect(report.steer.result.status).toBe('completed');
    expect(report.steer.ticket.status).toBe('closed');
    expect(report.steer.transcript.some((m) => m.role === 'user' && String(m.content).includes('Mention the refund'))).toBe(true);
  });

  it('the parent cancelled while its agent child is parked ends CANCELED, the child interrupted, the write never done (docs/plugin.md)', () => {
    expect(report.parentCancelled.parent).toBe('cancelled');
    expect(report.parentCancelled.parentStatus).toBe('CANCELLED');
    expect(report.parentCancelled.child).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' } });
    expect(report.parentCancelled.ticket.status).toBe('open');
  });

  it('a Stop while parked ends the run interrupted and the write never happens', () => {
    expect(report.stop.result).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'not needed any more' } });
    expect(report.stop.ticket.status).toBe('open');
  });
});
