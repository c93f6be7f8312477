// The notification webhook as a hostile or broken receiver sees it, and bad
// notification settings: a receiver that never answers cannot hold a run (it
// still answers status, takes a decision and ends, Stop too); a 10 MB answer
// costs nothing and counts as taken; a redirect to another host is not
// followed; a webhook URL that is not http(s) stops the worker at start,
// naming the variable; a run on a worker without notifications schedules
// nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveSignal, cancelSignal, decideUpdate, statusQuery } from '../../common/run-messages.js';
import { InputError } from '../../common/input-error.js';
import type { agentRun } from '../../workflows/index.js';
import { standaloneWorkerConfig } from '../../worker/env-options.js';
import { AgentPlugin } from '../../worker/agent-plugin.js';
import { parseBuiltin } from '../helpers/builtin-specs.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { startWorkerProcess } from '../helpers/worker-process.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';
let r: Receiver;
let elsewhere: Receiver;
let notifying: { taskQueue: string; shutdown(): Promise<void> };

beforeAll(async () => {
  r = await startReceiver();
  elsewhere = await startReceiver();
  notifying = await h.startWorker({ taskQueue: `notify-attacks-${randomUUID().slice(0, 8)}`, notify: { routes: [{ url: `${r.url}/hook` }] } });
});

afterAll(async () => {
  await notifying?.shutdown();
  r?.release();
  await r?.close();
  await elsewhere?.close();
});

const start = (id: string) =>
  h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: notifying.taskQueue, workflowId: id, args: [{ task, model: 'destructive', workspace: freshWorkspace() }] });
const deliveries = (id: string) => r.of(id);

describe('a receiver that never answers', () => {
  it('the run still answers status, takes a decision through the update and completes', async () => {
    const id = `hang-${randomUUID().slice(0, 8)}`;
    r.answer((d) => (d.body.workflowId === id ? 'hold' : 200));
    const handle = await start(id);
    await waitFor('the delivery, held', () => (deliveries(id).length > 0 && r.held() > 0) || null);
    const s = await handle.query(statusQuery);
    expect(s).toMatchObject({ agentStatus: 'awaiting_approval', interruption: { callId: 'c2' } });
    const answer = await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] });
    expect(answer.agentStatus).not.toBe('awaiting_approval');
    expect((await handle.result()).status).toBe('completed');
    // The delivery was cancelled with its parking: the closed run has nothing pending.
    const history = (await handle.fetchHistory()).events ?? [];
    expect(history.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
  });

  it('a Stop while the delivery hangs ends the run interrupted', async () => {
    const id = `hang-stop-${randomUUID().slice(0, 8)}`;
    r.answer((d) => (d.body.workflowId === id ? 'hold' : 200));
    const handle = await start(id);
    await waitFor('the delivery, held', () => (deliveries(id).length > 0 && r.held() > 0) || null);
    await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
    expect((await handle.result())).toMatchObject({ status: 'interrupted' });
  });
});

describe('what a receiver answers', () => {
  it('a 10 MB body with a 200 is taken as delivered, once, without being read; the worker goes on notifying', async () => {
    const id = `big-${randomUUID().slice(0, 8)}`;
    const big = Buffer.alloc(10 * 1024 * 1024, 'x');
    r.answer((d) => (d.body.workflowId === id ? { status: 200, body: big, headers: { 'content-type': 'text/plain' } } : 200));
    const handle = await start(id);
    await waitForApproval(handle, 'c2');
    await waitFor('the delivery', () => deliveries(id).length > 0 || null);
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect((await handle.result()).status).toBe('completed');
    expect(deliveries(id)).toHaveLength(1);
    const history = (await handle.fetchHistory()).events ?? [];
    expect(history.filter((e) => e.activityTaskCompletedEventAttributes).length).toBeGreaterThan(0);
    // The same worker still delivers the next run's event.
    const next = `after-big-${randomUUID().slice(0, 8)}`;
    r.answer(() => 200);
    const h2 = await start(next);
    await waitFor('the next run\'s delivery', () => deliveries(next).length > 0 || null);
    await h2.signal(cancelSignal, { reason: 'test done' });
    await h2.result();
  });

  it('a redirect to another host is not followed: that host gets nothing, and the event is delivered again, same key, until a 2xx', async () => {
    const id = `redirect-${randomUUID().slice(0, 8)}`;
    r.answer((d, nth) => (d.body.workflowId === id && nth === 1 ? { status: 302, headers: { location: `${elsewhere.url}/stolen` } } : 200));
    const handle = await start(id);
    const ds = await waitFor('a second delivery', () => (deliveries(id).length >= 2 ? deliveries(id) : null));
    expect(ds[1].key).toBe(ds[0].key);
    expect(elsewhere.deliveries).toHaveLength(0);
    await handle.signal(cancelSignal, { reason: 'test done' });
    expect((await handle.result()).status).toBe('interrupted');
    expect(elsewhere.deliveries).toHaveLength(0);
  });
});

describe('a worker without notifications', () => {
  it('a run that parks and is decided schedules no notification activity (no extra Actions)', async () => {
    const handle = await h.start({ task, model: 'destructive', workspace: freshWorkspace(), limits: { maxTurns: 10, approvalEscalateAfterMs: 1000 } });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect((await handle.result()).status).toBe('completed');
    const events = (await handle.fetchHistory()).events ?? [];
    const types = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n) => n);
    expect(types).not.toContain('notifyParked');
    // Nobody to escalate to: no timer either.
    expect(events.some((e) => e.timerStartedEventAttributes)).toBe(false);
  });
});

describe('bad notification settings', () => {
  const base = { TEMPORAL_ADDRESS: '127.0.0.1:1', AGENT_WORKSPACE: '/tmp/agent-notify-attack' };

  it.each([
    ['AGENT_NOTIFY_URL', 'file:///etc/passwd'],
    ['AGENT_NOTIFY_URL', 'not a url'],
    ['AGENT_NOTIFY_SLACK_URL', 'ftp://hooks.example/x'],
    ['AGENT_OPS_URL', 'javascript:alert(1)'],
  ])('%s=%s is refused naming the variable', (name, value) => {
    expect(() => standaloneWorkerConfig({ ...base, [name]: value })).toThrow(new RegExp(`^${name} must be an http: or https: URL`));
  });

  it('a worker process with AGENT_NOTIFY_URL=file:///etc/passwd exits at start, naming the variable', async () => {
    const err = await startWorkerProcess({ taskQueue: `bad-notify-${randomUUID().slice(0, 8)}`, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { AGENT_NOTIFY_URL: 'file:///etc/passwd' } }).then(
      async (w) => {
        await w.kill();
        return null;
      },
      (e: Error) => e,
    );
    expect(err?.message).toContain('AGENT_NOTIFY_URL must be an http: or https: URL');
  });

  it('the notify option: a route URL that is not http(s), an unknown event or format is refused naming the option', () => {
    const opts = { model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/agent-notify-attack' };
    expect(() => new AgentPlugin({ ...opts, notify: { routes: [{ url: 'file:///etc/passwd' }] } })).toThrow(/^AgentPlugin option notify\.routes\[0\]\.url must be an http: or https: URL/);
    expect(() => new AgentPlugin({ ...opts, notify: { routes: [{ url: 'https://x.example', events: ['approval_granted' as 'approval_required'] }] } })).toThrow(/^AgentPlugin option notify\.routes\[0\]\.events\[0\] must be one of/);
    expect(() => new AgentPlugin({ ...opts, notify: { routes: [{ url: 'https://x.example', format: 'teams' as 'json' }] } })).toThrow(/^AgentPlugin option notify\.routes\[0\]\.format must be one of 'json', 'slack'/);
  });

  it('limits.approvalEscalateAfterMs: refused unless a positive number below approvalTimeoutMs, naming the field', () => {
    const refusal = (input: unknown) => {
      try {
        parseBuiltin(input);
        return null;
      } catch (err) {
        return err instanceof InputError ? `${err.field}: ${err.message}` : String(err);
      }
    };
    expect(refusal({ task, limits: { maxTurns: 3, approvalEscalateAfterMs: -5 } })).toMatch(/^limits\.approvalEscalateAfterMs: /);
    expect(refusal({ task, limits: { maxTurns: 3, approvalEscalateAfterMs: 'soon' } })).toMatch(/^limits\.approvalEscalateAfterMs: /);
    expect(refusal({ task, approvalTimeoutMs: 5000, limits: { maxTurns: 3, approvalEscalateAfterMs: 5000 } })).toMatch(/^limits\.approvalEscalateAfterMs: .*limits\.approvalEscalateAfterMs must be below approvalTimeoutMs \(5000\), got 5000/);
    expect(refusal({ task, approvalTimeoutMs: 5000, limits: { maxTurns: 3, approvalEscalateAfterMs: 4000 } })).toBeNull();
    expect(parseBuiltin({ task, limits: { maxTurns: 3, approvalEscalateAfterMs: 4000 } }).approvalEscalateAfterMs).toBe(4000);
    // Unset: the configuration carries no such field (it is what it was before escalation existed).
    expect(parseBuiltin({ task, limits: { maxTurns: 3 } })).not.toHaveProperty('approvalEscalateAfterMs');
  });
});
